//! A model in the local Ollama store, found as Ollama finds it (read from
//! ollama/ollama: `types/model/name.go` for the name, `manifest/paths.go`
//! and `manifest/manifest.go` for the layout, `server/images.go` `GetModel`
//! for which layer is the model, `envconfig/config.go` `Models` for the
//! store's default):
//!
//! - a name is `[host/][namespace/]model[:tag]`, the defaults
//!   `registry.ollama.ai`, `library` and `latest` filling what is left out
//!   (`hf.co/org/repo:Q4_K_M`, `user/model`, `qwen3:8b`);
//! - its manifest is `<store>/manifests/<host>/<namespace>/<model>/<tag>`,
//!   a Docker-style JSON manifest whose `layers` carry a `mediaType` and a
//!   `digest`;
//! - the weights are the layer of mediaType
//!   `application/vnd.ollama.image.model` (the last one, as `GetModel`'s
//!   loop leaves it), at `<store>/blobs/sha256-<64 hex>`; only digests of
//!   that form are accepted (Ollama's `BlobsPath` refuses others too);
//! - the store is `$OLLAMA_MODELS` (trimmed of spaces and quotes), else
//!   `~/.ollama/models`.
//!
//! The GGUF blob holds the tokenizer and the Jinja chat template
//! (`tokenizer.chat_template`). Ollama itself may render the prompt with a
//! Go template layer (`application/vnd.ollama.image.template`), a built-in
//! renderer or a parser named in the config blob instead; the location
//! says so ([`super::HostTemplate::OllamaOwn`]), because a count from the
//! GGUF's template is then exact for the GGUF's template, not necessarily
//! for what Ollama sends.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::{has_list, list_names, read_small, HostTemplate, ModelLocation};
use crate::text::clip;
use crate::{Error, ErrorKind, Result};

const DEFAULT_HOST: &str = "registry.ollama.ai";
const DEFAULT_NAMESPACE: &str = "library";
const DEFAULT_TAG: &str = "latest";

/// The mediaType of the weights layer.
pub const MODEL_LAYER: &str = "application/vnd.ollama.image.model";
/// The mediaTypes of a Go template layer (`prompt` is the old name).
const TEMPLATE_LAYERS: [&str; 2] = ["application/vnd.ollama.image.template", "application/vnd.ollama.image.prompt"];

/// An Ollama model name, every part filled in.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OllamaName {
    /// The registry host (`registry.ollama.ai`, `hf.co`).
    pub host: String,
    /// The namespace (`library` for Ollama's own models, a user, an org).
    pub namespace: String,
    /// The model (`qwen3`).
    pub model: String,
    /// The tag (`latest`, `8b`, `Q4_K_M`).
    pub tag: String,
}

impl std::fmt::Display for OllamaName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}/{}:{}", self.host, self.namespace, self.model, self.tag)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Host,
    Namespace,
    Model,
    Tag,
}

impl Part {
    fn name(self) -> &'static str {
        match self {
            Part::Host => "host",
            Part::Namespace => "namespace",
            Part::Model => "model",
            Part::Tag => "tag",
        }
    }
}

impl OllamaName {
    /// Parses `name` as Ollama's `ParseName` does (the tag after the last
    /// `:` when it follows the last `/`, then model, namespace and host from
    /// the right, a `scheme://` before the host dropped) and checks every
    /// part as `IsFullyQualified` does: a letter, digit or `_` first, then
    /// letters, digits, `_`, `-`, and `.` (not in a namespace) or `:` (only
    /// in a host); 1 to 80 bytes (350 for a host). `UnsafePath` for a part
    /// that is `.`/`..` or a name with a `\`, NUL or a leading `/`;
    /// `InvalidArgument` for any other bad part, naming it.
    pub fn parse(name: &str) -> Result<OllamaName> {
        crate::text::check_name("Ollama model name", name)?;
        let shown = clip(name);
        if name.starts_with('/') || name.contains('\\') || name.contains('\0') {
            return Err(Error::new(
                ErrorKind::UnsafePath,
                format!("Ollama model name '{shown}' looks like a path; give a model name such as qwen3:8b"),
            ));
        }
        let mut rest = name;
        let mut tag = None;
        if rest.rfind(':').map(|i| i as isize).unwrap_or(-1) > rest.rfind('/').map(|i| i as isize).unwrap_or(-1) {
            let i = rest.rfind(':').expect("found above");
            tag = Some(&rest[i + 1..]);
            rest = &rest[..i];
        }
        let (mut host, mut namespace) = (None, None);
        let model = match rest.rfind('/') {
            None => rest,
            Some(i) => {
                let model = &rest[i + 1..];
                rest = &rest[..i];
                match rest.rfind('/') {
                    None => namespace = Some(rest),
                    Some(j) => {
                        namespace = Some(&rest[j + 1..]);
                        let h = &rest[..j];
                        host = Some(h.split_once("://").map_or(h, |(_, h)| h));
                    }
                }
                model
            }
        };
        let parsed = OllamaName {
            host: host.unwrap_or(DEFAULT_HOST).to_string(),
            namespace: namespace.unwrap_or(DEFAULT_NAMESPACE).to_string(),
            model: model.to_string(),
            tag: tag.unwrap_or(DEFAULT_TAG).to_string(),
        };
        let parts = [
            (Part::Host, &parsed.host),
            (Part::Namespace, &parsed.namespace),
            (Part::Model, &parsed.model),
            (Part::Tag, &parsed.tag),
        ];
        for (kind, value) in parts {
            if value == "." || value == ".." || value.split('/').any(|c| c == "..") {
                return Err(Error::new(
                    ErrorKind::UnsafePath,
                    format!(
                        "Ollama model name '{shown}': the {} '{}' would lead out of the store",
                        kind.name(),
                        clip(value)
                    ),
                ));
            }
            check_part(kind, value).map_err(|why| {
                Error::invalid_argument(format!(
                    "Ollama model name '{shown}': the {} '{}' {why} (Ollama's names are [host/][namespace/]model[:tag])",
                    kind.name(),
                    clip(value)
                ))
            })?;
        }
        Ok(parsed)
    }

    /// The manifest's path under `<store>/manifests`.
    pub fn manifest_path(&self, store: &Path) -> PathBuf {
        store.join("manifests").join(&self.host).join(&self.namespace).join(&self.model).join(&self.tag)
    }
}

/// Why `value` is not a valid `kind` part, as `isValidPart` decides.
fn check_part(kind: Part, value: &str) -> std::result::Result<(), String> {
    let max = if kind == Part::Host { 350 } else { 80 };
    if value.is_empty() {
        return Err("is empty".into());
    }
    if value.len() > max {
        return Err(format!("is {} bytes, over {max}", value.len()));
    }
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    for (i, b) in value.bytes().enumerate() {
        let ok = match b {
            _ if i == 0 => word(b),
            b'_' | b'-' => true,
            b'.' => kind != Part::Namespace,
            b':' => kind == Part::Host,
            _ => word(b),
        };
        if !ok {
            let c = value[i..].chars().next().unwrap_or('?');
            let at = if i == 0 { "starts with" } else { "has" };
            return Err(format!("{at} {c:?}, which Ollama does not allow there"));
        }
    }
    Ok(())
}

/// Ollama's store folder: `$OLLAMA_MODELS` (spaces and quotes trimmed, as
/// Ollama's `envconfig.Var` does), else `~/.ollama/models`.
pub fn default_ollama_store() -> Result<PathBuf> {
    if let Some(v) = std::env::var_os("OLLAMA_MODELS") {
        let v = v.to_string_lossy();
        let v = v.trim().trim_matches(|c| c == '"' || c == '\'');
        if !v.is_empty() {
            return Ok(PathBuf::from(v));
        }
    }
    Ok(super::home_dir()?.join(".ollama").join("models"))
}

#[derive(Deserialize)]
struct Manifest {
    #[serde(default)]
    config: Option<Layer>,
    #[serde(default)]
    layers: Vec<Layer>,
}

#[derive(Deserialize)]
struct Layer {
    #[serde(rename = "mediaType", default)]
    media_type: String,
    #[serde(default)]
    digest: String,
}

/// The renderer and parser a model's config blob names (`ConfigV2`).
#[derive(Deserialize, Default)]
struct Config {
    #[serde(default)]
    renderer: String,
    #[serde(default)]
    parser: String,
    #[serde(default)]
    remote_host: String,
}

/// Finds `name`'s GGUF in the Ollama store at `store` (see the module doc).
pub fn locate_ollama(name: &str, store: &Path) -> Result<ModelLocation> {
    let parsed = OllamaName::parse(name)?;
    if !store.is_dir() {
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "Ollama store {}: no such folder (Ollama keeps models in $OLLAMA_MODELS, else ~/.ollama/models; give the folder)",
                store.display()
            ),
        ));
    }
    let manifest_path = parsed.manifest_path(store);
    if !manifest_path.is_file() {
        return Err(unknown(&parsed, store));
    }
    let what = format!("Ollama manifest of {parsed}");
    let text = read_small(&manifest_path, &what)?;
    let manifest: Manifest = serde_json::from_str(&text).map_err(|e| {
        Error::new(ErrorKind::InvalidJson, format!("{what} ({}): not a manifest: {e}", manifest_path.display()))
    })?;
    let layer = manifest.layers.iter().rev().find(|l| l.media_type == MODEL_LAYER).ok_or_else(|| {
        let kinds: Vec<String> = manifest.layers.iter().map(|l| l.media_type.clone()).collect();
        Error::invalid_argument(format!(
            "{what} ({}): no layer of mediaType {MODEL_LAYER}, so no GGUF to read (a cloud model or one Ollama keeps in another format?){}",
            manifest_path.display(),
            has_list("its layers are", &kinds)
        ))
    })?;
    let blob = blob_path(store, &layer.digest, &what)?;
    if !blob.is_file() {
        return Err(Error::new(
            ErrorKind::Io,
            format!(
                "{what}: its model blob {} is missing (an interrupted pull? `ollama pull` it again)",
                blob.display()
            ),
        ));
    }
    check_gguf(&blob, &what)?;
    let host_template = host_template(&manifest, store, &what)?;
    Ok(ModelLocation {
        tokenizer: blob.clone(),
        origin: format!("ollama {parsed} ({})", blob.display()),
        host_template,
    })
}

/// `<store>/blobs/sha256-<hex>` for a `sha256:<64 hex>` digest (or
/// `sha256-`, as Ollama accepts); anything else refused before a path is
/// built from it.
fn blob_path(store: &Path, digest: &str, what: &str) -> Result<PathBuf> {
    let hex = digest.strip_prefix("sha256:").or_else(|| digest.strip_prefix("sha256-"));
    match hex {
        Some(h) if h.len() == 64 && h.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Ok(store.join("blobs").join(format!("sha256-{h}")))
        }
        _ => {
            let kind = if digest.contains(['/', '\\']) || digest.contains("..") {
                ErrorKind::UnsafePath
            } else {
                ErrorKind::InvalidArgument
            };
            Err(Error::new(kind, format!("{what}: the digest '{}' is not sha256:<64 hex digits>", clip(digest))))
        }
    }
}

/// `InvalidArgument` unless `blob` starts with GGUF's magic.
fn check_gguf(blob: &Path, what: &str) -> Result<()> {
    use std::io::Read;
    let mut magic = [0u8; 4];
    let read = std::fs::File::open(blob).and_then(|mut f| f.read_exact(&mut magic));
    read.map_err(|e| Error::new(ErrorKind::Io, format!("{what}: {}: {e}", blob.display())))?;
    if &magic != b"GGUF" {
        return Err(Error::invalid_argument(format!(
            "{what}: the model blob {} is not a GGUF file (turnfit reads the tokenizer and template from GGUF weights)",
            blob.display()
        )));
    }
    Ok(())
}

/// Whether Ollama may render with something other than the GGUF's Jinja
/// template: a Go template layer, or a renderer or parser in the config.
fn host_template(manifest: &Manifest, store: &Path, what: &str) -> Result<HostTemplate> {
    let mut own = Vec::new();
    if let Some(layer) = manifest.layers.iter().find(|l| TEMPLATE_LAYERS.contains(&l.media_type.as_str())) {
        let path = blob_path(store, &layer.digest, what)?;
        own.push(format!("a Go template layer ({})", path.display()));
    }
    if let Some(config) = manifest.config.as_ref().filter(|c| !c.digest.is_empty()) {
        let path = blob_path(store, &config.digest, what)?;
        // The config only adds to the note; one that cannot be read is
        // said, not fatal (the weights and template are in the GGUF).
        match read_small(&path, what).ok().and_then(|t| serde_json::from_str::<Config>(&t).ok()) {
            Some(c) => {
                if !c.renderer.is_empty() {
                    own.push(format!("the built-in renderer '{}'", clip(&c.renderer)));
                }
                if !c.parser.is_empty() {
                    own.push(format!("the parser '{}'", clip(&c.parser)));
                }
                if !c.remote_host.is_empty() {
                    own.push(format!("a remote host '{}'", clip(&c.remote_host)));
                }
            }
            None => own.push(format!("a config blob that could not be read ({})", path.display())),
        }
    }
    Ok(if own.is_empty() {
        HostTemplate::Files
    } else if own.len() == 1 && own[0].starts_with("a config blob") {
        HostTemplate::OllamaOwn(format!(
            "{what}: {} could not be read as JSON, so whether Ollama renders the prompt with a renderer of its own instead of the GGUF's chat template is unknown; compare the count with Ollama's prompt_eval_count",
            own[0].trim_start_matches("a ")
        ))
    } else {
        HostTemplate::OllamaOwn(format!(
            "{what} has {}: Ollama may render the prompt with that, not the GGUF's chat template, so the count is exact for the GGUF's template; compare it with Ollama's prompt_eval_count",
            own.join(" and ")
        ))
    })
}

/// `UnknownModel`: which part is missing, with what the store has instead.
fn unknown(name: &OllamaName, store: &Path) -> Error {
    let manifests = store.join("manifests");
    let model_dir = manifests.join(&name.host).join(&name.namespace).join(&name.model);
    let message = if model_dir.is_dir() {
        let tags = list_names(&model_dir, 1000);
        format!(
            "the Ollama store {} has no tag '{}' of {}/{}/{}{}",
            store.display(),
            name.tag,
            name.host,
            name.namespace,
            name.model,
            has_list("it has", &tags)
        )
    } else {
        let mut models = Vec::new();
        for host in list_names(&manifests, 100) {
            for ns in list_names(&manifests.join(&host), 1000) {
                for m in list_names(&manifests.join(&host).join(&ns), 1000) {
                    let short = if host == DEFAULT_HOST && ns == DEFAULT_NAMESPACE {
                        m
                    } else if host == DEFAULT_HOST {
                        format!("{ns}/{m}")
                    } else {
                        format!("{host}/{ns}/{m}")
                    };
                    models.push(short);
                    if models.len() >= 5000 {
                        break;
                    }
                }
            }
        }
        let short = if name.host == DEFAULT_HOST && name.namespace == DEFAULT_NAMESPACE {
            name.model.clone()
        } else {
            format!("{}/{}", name.namespace, name.model)
        };
        let close = crate::text::close_matches(&short, models.iter().map(String::as_str), 3);
        let hint = if close.is_empty() { has_list("it has", &models) } else { has_list("did you mean", &close) };
        format!(
            "the Ollama store {} has no model {}/{}/{} (`ollama pull` it first){hint}",
            store.display(),
            name.host,
            name.namespace,
            name.model
        )
    };
    Error::new(ErrorKind::UnknownModel, message)
}
