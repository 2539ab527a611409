//! Where a model's chat template is: beside an HF `tokenizer.json`
//! (`chat_template.jinja`, or `chat_template` in `tokenizer_config.json`, as
//! transformers looks), inside a GGUF (`tokenizer.chat_template`), or a file
//! given. The special-token strings the template prints (`bos_token`,
//! `eos_token`) come from the same place.

use std::path::Path;

use serde_json::Value as Json;

use crate::limits::MAX_TOKENIZER_FILE_BYTES;
use crate::pipeline::FileTokenizer;
use crate::{Error, ErrorKind, Result};

/// A model's template source and the token strings it is rendered with.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ModelTemplate {
    /// The Jinja source.
    pub source: String,
    /// Where it came from (a path, or a GGUF key), for messages.
    pub origin: String,
    /// `bos_token`, when the files name one.
    pub bos_token: Option<String>,
    /// `eos_token`, when the files name one.
    pub eos_token: Option<String>,
    /// `chat_control_tokens` from `tokenizer_config.json`: the added tokens
    /// besides the special ones that user text may not produce (see
    /// [`super::PromptCounter`]); `None` when the config has no such list.
    pub chat_control_tokens: Option<Vec<String>>,
}

/// Largest template file read (templates are a few KB; the biggest known is
/// about 40 KB).
pub const MAX_TEMPLATE_BYTES: u64 = 1 << 20;

impl ModelTemplate {
    /// The template belonging to the tokenizer file at `tokenizer_path`
    /// (already loaded as `tokenizer`): a GGUF's own, or the one beside a
    /// `tokenizer.json`. `with_tools` picks the `tool_use` entry of a
    /// config that lists named templates, as transformers does.
    pub fn for_tokenizer(tokenizer_path: &Path, tokenizer: &FileTokenizer, with_tools: bool) -> Result<ModelTemplate> {
        Self::find(tokenizer_path, tokenizer, with_tools, None)
    }

    /// [`ModelTemplate::for_tokenizer`], with the template from `file` when
    /// one is given (`--chat-template`): the model's files may hold no
    /// template, but still name the token strings it is rendered with.
    pub fn load(
        tokenizer_path: &Path,
        tokenizer: &FileTokenizer,
        with_tools: bool,
        file: Option<&Path>,
    ) -> Result<ModelTemplate> {
        let given = match file {
            Some(f) => Some((read_limited(f, MAX_TEMPLATE_BYTES)?, f.display().to_string())),
            None => None,
        };
        Self::find(tokenizer_path, tokenizer, with_tools, given)
    }

    /// [`ModelTemplate::for_tokenizer`] with the template's source given
    /// as text (a host's `chat_template` argument), named `origin` in
    /// messages; `LimitExceeded` above [`MAX_TEMPLATE_BYTES`].
    pub fn with_source(
        tokenizer_path: &Path,
        tokenizer: &FileTokenizer,
        source: &str,
        origin: &str,
    ) -> Result<ModelTemplate> {
        if source.len() as u64 > MAX_TEMPLATE_BYTES {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("{origin}: larger than {MAX_TEMPLATE_BYTES} bytes"),
            ));
        }
        Self::find(tokenizer_path, tokenizer, false, Some((source.to_string(), origin.to_string())))
    }

    fn find(
        tokenizer_path: &Path,
        tokenizer: &FileTokenizer,
        with_tools: bool,
        given: Option<(String, String)>,
    ) -> Result<ModelTemplate> {
        let shown = tokenizer_path.display().to_string();
        if let Some(source) = &tokenizer.info().chat_template {
            let (bos, eos) = gguf_special_tokens(tokenizer_path, tokenizer)?;
            let (source, origin) =
                given.unwrap_or_else(|| (source.clone(), format!("{shown} (tokenizer.chat_template)")));
            return Ok(ModelTemplate { source, origin, bos_token: bos, eos_token: eos, chat_control_tokens: None });
        }
        let dir = tokenizer_path.parent().unwrap_or(Path::new("."));
        let config_path = dir.join("tokenizer_config.json");
        let config: Option<Json> = match read_limited(&config_path, MAX_TOKENIZER_FILE_BYTES as u64) {
            Ok(text) => Some(serde_json::from_str(&text).map_err(|e| {
                Error::new(ErrorKind::InvalidJson, format!("{}: not valid JSON: {e}", config_path.display()))
            })?),
            Err(e) if e.kind() == ErrorKind::Io => None,
            Err(e) => return Err(e),
        };
        let token = |name: &str| config.as_ref().and_then(|c| token_text(&c[name]));
        let (bos_token, eos_token) = (token("bos_token"), token("eos_token"));
        let chat_control_tokens = config
            .as_ref()
            .and_then(|c| c["chat_control_tokens"].as_array())
            .map(|list| list.iter().filter_map(Json::as_str).map(str::to_string).collect());
        if let Some((source, origin)) = given {
            return Ok(ModelTemplate { source, origin, bos_token, eos_token, chat_control_tokens });
        }
        let jinja_path = dir.join("chat_template.jinja");
        if jinja_path.is_file() {
            let source = read_limited(&jinja_path, MAX_TEMPLATE_BYTES)?;
            let origin = jinja_path.display().to_string();
            return Ok(ModelTemplate { source, origin, bos_token, eos_token, chat_control_tokens });
        }
        let origin = format!("{} (chat_template)", config_path.display());
        let source = match config.as_ref().map(|c| &c["chat_template"]) {
            Some(Json::String(s)) => s.clone(),
            Some(Json::Array(named)) => {
                let find = |want: &str| named.iter().find(|t| t["name"] == want).and_then(|t| t["template"].as_str());
                let picked = if with_tools { find("tool_use").or_else(|| find("default")) } else { find("default") };
                picked.map(str::to_string).ok_or_else(|| {
                    Error::new(ErrorKind::InvalidArgument, format!("{origin}: lists named templates but none called \"default\""))
                })?
            }
            _ => {
                return Err(Error::new(
                    ErrorKind::InvalidArgument,
                    format!("{shown}: no chat template found (no chat_template.jinja or chat_template in tokenizer_config.json beside it, none in the file); give one with --chat-template"),
                ))
            }
        };
        Ok(ModelTemplate { source, origin, bos_token, eos_token, chat_control_tokens })
    }
}

/// `"<s>"` or `{"content": "<s>", ...}` (older configs' AddedToken form).
fn token_text(v: &Json) -> Option<String> {
    match v {
        Json::String(s) => Some(s.clone()),
        Json::Object(m) => m.get("content").and_then(Json::as_str).map(str::to_string),
        _ => None,
    }
}

/// A GGUF's BOS and EOS strings: the ids `tokenizer.ggml.bos_token_id` and
/// `eos_token_id` name, as text (llama.cpp renders templates with them).
fn gguf_special_tokens(path: &Path, tokenizer: &FileTokenizer) -> Result<(Option<String>, Option<String>)> {
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::new(ErrorKind::Io, format!("{shown}: {e}")))?;
    let len = file.metadata().map_err(|e| Error::new(ErrorKind::Io, format!("{shown}: {e}")))?.len();
    let meta = crate::pipeline::gguf::read(std::io::BufReader::new(file), len, &shown)?;
    let text = |key: &str| -> Option<String> {
        let id = u32::try_from(meta.int(key)?).ok()?;
        tokenizer.decode(&[id]).ok()
    };
    Ok((text("tokenizer.ggml.bos_token_id"), text("tokenizer.ggml.eos_token_id")))
}

/// A text file of at most `max` bytes; `Io` when it cannot be read.
pub fn read_limited(path: &Path, max: u64) -> Result<String> {
    use std::io::Read;
    let shown = path.display().to_string();
    let file = std::fs::File::open(path).map_err(|e| Error::new(ErrorKind::Io, format!("{shown}: {e}")))?;
    let mut bytes = Vec::new();
    file.take(max + 1).read_to_end(&mut bytes).map_err(|e| Error::new(ErrorKind::Io, format!("{shown}: {e}")))?;
    if bytes.len() as u64 > max {
        return Err(Error::new(ErrorKind::LimitExceeded, format!("{shown}: larger than {max} bytes")));
    }
    String::from_utf8(bytes).map_err(|e| {
        Error::new(ErrorKind::InvalidUtf8, format!("{shown}: not UTF-8 at byte {}", e.utf8_error().valid_up_to()))
    })
}
