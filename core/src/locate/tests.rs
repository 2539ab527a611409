//! The locators on self-made stores: an Ollama store with a manifest shaped
//! as Ollama writes it (`manifest/manifest.go` `WriteManifest`: schemaVersion
//! 2, the Docker v2 mediaType, a config layer, layers with mediaType,
//! digest, size) pointing at a tiny GGUF written here, and a hub cache with
//! `refs/main`, `snapshots/<commit>/` symlinks into `blobs/` and
//! `.no_exist/`. Every bad input's kind and message. The same layouts over
//! real model files are in core/tests/locate_real.rs.

use std::path::{Path, PathBuf};

use serde_json::json;

use super::*;
use crate::pipeline::gguf::tests::{gguf, s, strings};
use crate::ErrorKind;

pub(crate) const TEMPLATE: &str =
    "{{ bos_token }}{% for m in messages %}{{ m.role }}:{{ m.content }}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";

/// A `llama`-type GGUF: `<unk>` `<s>` `</s>`, 256 byte tokens, `▁` `a`
/// `b`, with `TEMPLATE` as its chat template.
pub(crate) fn tiny_gguf() -> Vec<u8> {
    let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    tokens.extend((0..=255u8).map(|b| format!("<0x{b:02X}>")));
    tokens.extend(["\u{2581}", "a", "b"].map(String::from));
    let refs: Vec<&str> = tokens.iter().map(String::as_str).collect();
    let array = |ty: u32, items: Vec<[u8; 4]>| {
        let mut b = ty.to_le_bytes().to_vec();
        b.extend((items.len() as u64).to_le_bytes());
        items.iter().for_each(|x| b.extend(x));
        b
    };
    let scores = array(6, (0..refs.len()).map(|i| (-(i as f32)).to_le_bytes()).collect());
    let types = array(
        5,
        (0..refs.len())
            .map(|i| {
                (if i < 3 {
                    3i32
                } else if i < 259 {
                    6
                } else {
                    1
                })
                .to_le_bytes()
            })
            .collect(),
    );
    gguf(&[
        ("general.architecture", 8, s("llama")),
        ("tokenizer.ggml.model", 8, s("llama")),
        ("tokenizer.ggml.tokens", 9, strings(&refs)),
        ("tokenizer.ggml.scores", 9, scores),
        ("tokenizer.ggml.token_type", 9, types),
        ("tokenizer.ggml.bos_token_id", 4, 1u32.to_le_bytes().to_vec()),
        ("tokenizer.ggml.eos_token_id", 4, 2u32.to_le_bytes().to_vec()),
        ("tokenizer.chat_template", 8, s(TEMPLATE)),
    ])
}

pub(crate) fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("turnfit-locate-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const HEX_MODEL: &str = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
const HEX_TEMPLATE: &str = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";
const HEX_CONFIG: &str = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";

/// A manifest as Ollama writes it, with `layers`.
pub(crate) fn manifest(layers: serde_json::Value) -> String {
    json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": format!("sha256:{HEX_CONFIG}"), "size": 2},
        "layers": layers,
    })
    .to_string()
}

fn model_layer(hex: &str) -> serde_json::Value {
    json!({"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{hex}"), "size": 1234})
}

/// A store holding `manifest_text` as `<host>/<ns>/<model>/<tag>`, the
/// tiny GGUF as the model blob and `{}` as the config.
pub(crate) fn store(tag: &str, path: [&str; 4], manifest_text: &str) -> PathBuf {
    let root = temp(tag);
    let dir = root.join("manifests").join(path[0]).join(path[1]).join(path[2]);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(path[3]), manifest_text).unwrap();
    std::fs::create_dir_all(root.join("blobs")).unwrap();
    std::fs::write(root.join("blobs").join(format!("sha256-{HEX_MODEL}")), tiny_gguf()).unwrap();
    std::fs::write(root.join("blobs").join(format!("sha256-{HEX_CONFIG}")), "{}").unwrap();
    root
}

fn err(r: Result<ModelLocation>) -> crate::Error {
    r.expect_err("expected an error")
}

#[test]
fn names_parse_as_ollama_parses_them() {
    let cases = [
        ("llama3.1", "registry.ollama.ai/library/llama3.1:latest"),
        ("qwen3:8b", "registry.ollama.ai/library/qwen3:8b"),
        ("hf.co/org/repo:Q4_K_M", "hf.co/org/repo:Q4_K_M"),
        ("registry.ollama.ai/library/gemma3:4b", "registry.ollama.ai/library/gemma3:4b"),
        ("https://registry.ollama.ai/library/gemma3:4b", "registry.ollama.ai/library/gemma3:4b"),
        ("user/model:tag", "registry.ollama.ai/user/model:tag"),
        ("localhost:5000/ns/m", "localhost:5000/ns/m:latest"),
        ("_x/y_.z:1.0-q", "registry.ollama.ai/_x/y_.z:1.0-q"),
    ];
    for (name, want) in cases {
        assert_eq!(OllamaName::parse(name).unwrap().to_string(), want, "{name}");
    }
    let bad = [
        ("../../etc", ErrorKind::UnsafePath, "'..' would lead out of the store"),
        ("../x:y", ErrorKind::UnsafePath, "namespace '..'"),
        ("a/../b/c/d", ErrorKind::UnsafePath, "host"),
        ("/etc/passwd", ErrorKind::UnsafePath, "looks like a path"),
        ("a\\b", ErrorKind::UnsafePath, "looks like a path"),
        ("qwen3:", ErrorKind::InvalidArgument, "the tag '' is empty"),
        ("Qwen 3", ErrorKind::InvalidArgument, "the model 'Qwen 3' has ' '"),
        ("ns.x/model", ErrorKind::InvalidArgument, "namespace 'ns.x' has '.'"),
        ("a/b/c/d", ErrorKind::InvalidArgument, "host 'a/b' has '/'"),
        ("model@sha256:abc", ErrorKind::InvalidArgument, "tag"),
        ("-x", ErrorKind::InvalidArgument, "starts with '-'"),
        ("m:t:u", ErrorKind::InvalidArgument, "model 'm:t' has ':'"),
    ];
    for (name, kind, words) in bad {
        let e = OllamaName::parse(name).expect_err(name);
        assert_eq!(e.kind(), kind, "{name}: {e}");
        assert!(e.message().contains(words), "{name}: {words:?} not in {e}");
    }
    let long = format!("m:{}", "t".repeat(81));
    assert!(OllamaName::parse(&long).unwrap_err().message().contains("over 80"));
    let huge = "m".repeat(100_000);
    assert_eq!(OllamaName::parse(&huge).unwrap_err().kind(), ErrorKind::InvalidArgument);
}

#[test]
fn an_ollama_model_resolves_to_its_gguf_blob() {
    let m = manifest(json!([
        model_layer(HEX_MODEL),
        {"mediaType": "application/vnd.ollama.image.license", "digest": format!("sha256:{HEX_TEMPLATE}"), "size": 3}
    ]));
    let root = store("ok", ["registry.ollama.ai", "library", "tiny", "latest"], &m);
    let found = locate_ollama("tiny", &root).unwrap();
    assert_eq!(found.tokenizer, root.join("blobs").join(format!("sha256-{HEX_MODEL}")));
    assert_eq!(found.host_template, HostTemplate::Files);
    assert!(found.origin.contains("registry.ollama.ai/library/tiny:latest"), "{}", found.origin);
    // The same through the place a front end names.
    let place = ModelPlace::from_options(None, Some("tiny:latest"), Some(root.to_str().unwrap()), None, None).unwrap();
    assert_eq!(place.unwrap().locate().unwrap(), found);
    // The file loads, with its template.
    let t = crate::pipeline::FileTokenizer::from_file_with(&found.tokenizer, &Default::default()).unwrap();
    assert_eq!(t.info().chat_template.as_deref(), Some(TEMPLATE));
}

#[test]
fn a_go_template_or_renderer_is_reported() {
    let m = manifest(json!([
        model_layer(HEX_MODEL),
        {"mediaType": "application/vnd.ollama.image.template", "digest": format!("sha256:{HEX_TEMPLATE}"), "size": 3}
    ]));
    let root = store("go", ["registry.ollama.ai", "library", "tiny", "latest"], &m);
    let found = locate_ollama("tiny", &root).unwrap();
    let HostTemplate::OllamaOwn(note) = &found.host_template else { panic!("{:?}", found.host_template) };
    assert!(note.contains("a Go template layer") && note.contains("prompt_eval_count"), "{note}");

    let root = store(
        "renderer",
        ["registry.ollama.ai", "library", "tiny", "latest"],
        &manifest(json!([model_layer(HEX_MODEL)])),
    );
    std::fs::write(
        root.join("blobs").join(format!("sha256-{HEX_CONFIG}")),
        r#"{"renderer":"qwen3-coder","parser":"qwen3-coder"}"#,
    )
    .unwrap();
    let HostTemplate::OllamaOwn(note) = locate_ollama("tiny", &root).unwrap().host_template else { panic!() };
    assert!(note.contains("renderer 'qwen3-coder'") && note.contains("parser 'qwen3-coder'"), "{note}");
}

#[test]
fn bad_ollama_stores_are_clear_errors() {
    let good = manifest(json!([model_layer(HEX_MODEL)]));
    let root = store("bad", ["registry.ollama.ai", "library", "tiny", "latest"], &good);

    let e = err(locate_ollama("tiny", &root.join("nowhere")));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("no such folder") && e.message().contains("OLLAMA_MODELS"), "{e}");

    let e = err(locate_ollama("tiyn", &root));
    assert_eq!(e.kind(), ErrorKind::UnknownModel, "{e}");
    assert!(
        e.message().contains("no model registry.ollama.ai/library/tiyn") && e.message().contains("did you mean: tiny"),
        "{e}"
    );

    let e = err(locate_ollama("tiny:8b", &root));
    assert_eq!(e.kind(), ErrorKind::UnknownModel, "{e}");
    assert!(e.message().contains("no tag '8b'") && e.message().contains("it has: latest"), "{e}");

    let e = err(locate_ollama("../../etc", &root));
    assert_eq!(e.kind(), ErrorKind::UnsafePath, "{e}");

    let write = |text: &str| {
        std::fs::write(root.join("manifests/registry.ollama.ai/library/tiny/latest"), text).unwrap();
        err(locate_ollama("tiny", &root))
    };
    let e = write("{not json");
    assert_eq!(e.kind(), ErrorKind::InvalidJson, "{e}");
    assert!(e.message().contains("Ollama manifest of registry.ollama.ai/library/tiny:latest"), "{e}");

    let e = write(&manifest(
        json!([{"mediaType": "application/vnd.ollama.image.license", "digest": format!("sha256:{HEX_TEMPLATE}")}]),
    ));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("no layer of mediaType application/vnd.ollama.image.model"), "{e}");
    assert!(e.message().contains("its layers are: application/vnd.ollama.image.license"), "{e}");

    let e = write(&manifest(json!([{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:1234"}])));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("the digest 'sha256:1234' is not sha256:<64 hex digits>"), "{e}");

    let e = write(&manifest(
        json!([{"mediaType": "application/vnd.ollama.image.model", "digest": "sha256:../../../etc/passwd"}]),
    ));
    assert_eq!(e.kind(), ErrorKind::UnsafePath, "{e}");

    let e = write(&manifest(json!([model_layer(&"d".repeat(64))])));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("model blob") && e.message().contains("is missing"), "{e}");

    std::fs::write(root.join("blobs").join(format!("sha256-{}", "e".repeat(64))), b"PK\x03\x04 not gguf").unwrap();
    let e = write(&manifest(json!([model_layer(&"e".repeat(64))])));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("not a GGUF file"), "{e}");

    let e = write(&" ".repeat(MAX_METADATA_BYTES as usize + 1));
    assert_eq!(e.kind(), ErrorKind::LimitExceeded, "{e}");

    // A config blob that cannot be read is said, not fatal.
    std::fs::write(root.join("manifests/registry.ollama.ai/library/tiny/latest"), &good).unwrap();
    std::fs::remove_file(root.join("blobs").join(format!("sha256-{HEX_CONFIG}"))).unwrap();
    let HostTemplate::OllamaOwn(note) = locate_ollama("tiny", &root).unwrap().host_template else { panic!() };
    assert!(note.contains("config blob that could not be read") && note.contains("is unknown"), "{note}");
}

/// A hub cache with `Org/Name` at `commit`, `refs/main` naming it, and the
/// snapshot's files as relative symlinks into `blobs/`, as huggingface_hub
/// lays them out.
#[cfg(unix)]
pub(crate) fn hub(tag: &str, files: &[(&str, &[u8])]) -> (PathBuf, PathBuf) {
    let root = temp(tag);
    let repo = root.join("models--Org--Name");
    let commit = "0123456789abcdef0123456789abcdef01234567";
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(repo.join("snapshots").join(commit)).unwrap();
    std::fs::write(repo.join("refs/main"), commit).unwrap();
    for (i, (name, bytes)) in files.iter().enumerate() {
        let blob = format!("blob{i:04}");
        std::fs::write(repo.join("blobs").join(&blob), bytes).unwrap();
        std::os::unix::fs::symlink(
            Path::new("../../blobs").join(&blob),
            repo.join("snapshots").join(commit).join(name),
        )
        .unwrap();
    }
    (root, repo)
}

#[cfg(unix)]
#[test]
fn a_hub_cache_repo_resolves_to_its_snapshot() {
    let (root, repo) = hub("hf", &[("tokenizer.json", b"{}"), ("tokenizer_config.json", b"{}")]);
    let snapshot = repo.join("snapshots/0123456789abcdef0123456789abcdef01234567");
    let want = snapshot.join("tokenizer.json");
    assert_eq!(locate_hf("Org/Name", Some(&root)).unwrap().tokenizer, want);
    assert_eq!(locate_hf("Org/Name@main", Some(&root)).unwrap().tokenizer, want);
    assert_eq!(locate_hf("Org/Name@0123456789abcdef0123456789abcdef01234567", Some(&root)).unwrap().tokenizer, want);
    // A repo folder, a snapshot folder.
    assert_eq!(locate_hf(repo.to_str().unwrap(), None).unwrap().tokenizer, want);
    assert_eq!(locate_hf(snapshot.to_str().unwrap(), None).unwrap().tokenizer, want);
    // Not canonicalized: the template files are beside it, in the snapshot.
    assert!(want.symlink_metadata().unwrap().file_type().is_symlink());
}

#[cfg(unix)]
#[test]
fn bad_hub_caches_are_clear_errors() {
    let (root, repo) = hub("hfbad", &[("tokenizer.json", b"{}")]);
    let cases: Vec<(&str, ErrorKind, &str)> = vec![
        ("Org/Nmae", ErrorKind::UnknownModel, "did you mean: Org/Name"),
        ("Org/../x", ErrorKind::UnsafePath, "'..' is not allowed"),
        ("a/b/c", ErrorKind::InvalidArgument, "more than one '/'"),
        ("Org/Na me", ErrorKind::InvalidArgument, "' ' is not allowed"),
        ("Org/Name--x", ErrorKind::InvalidArgument, "'--' is not allowed"),
        ("Org/Name@v2", ErrorKind::Io, "the revision 'v2' is not in the cache"),
        ("Org/Name@../../x", ErrorKind::UnsafePath, "not a branch, tag or commit name"),
        ("/no/such/folder", ErrorKind::Io, "no such folder"),
    ];
    for (model, kind, words) in cases {
        let e = err(locate_hf(model, Some(&root)));
        assert_eq!(e.kind(), kind, "{model}: {e}");
        assert!(e.message().contains(words), "{model}: {words:?} not in {e}");
    }
    let e = err(locate_hf("Org/Name", Some(&root.join("nowhere"))));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("HF_HUB_CACHE"), "{e}");

    // refs/main naming something that is not a commit.
    std::fs::write(repo.join("refs/main"), "../../../etc").unwrap();
    let e = err(locate_hf("Org/Name", Some(&root)));
    assert_eq!(e.kind(), ErrorKind::UnsafePath, "{e}");
    std::fs::write(repo.join("refs/main"), "0123456789abcdef0123456789abcdef01234567\n").unwrap();
    assert!(locate_hf("Org/Name", Some(&root)).is_ok(), "a trailing newline is read past");

    // The blob behind the snapshot's symlink is gone.
    for e in std::fs::read_dir(repo.join("blobs")).unwrap() {
        std::fs::remove_file(e.unwrap().path()).unwrap();
    }
    let e = err(locate_hf("Org/Name", Some(&root)));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("a symlink to a blob that is missing"), "{e}");

    // Recorded as absent.
    let commit = "0123456789abcdef0123456789abcdef01234567";
    std::fs::remove_file(repo.join("snapshots").join(commit).join("tokenizer.json")).unwrap();
    std::fs::create_dir_all(repo.join(".no_exist").join(commit)).unwrap();
    std::fs::write(repo.join(".no_exist").join(commit).join("tokenizer.json"), "").unwrap();
    let e = err(locate_hf("Org/Name", Some(&root)));
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert!(e.message().contains("the repo has no tokenizer.json"), "{e}");
    std::fs::remove_dir_all(repo.join(".no_exist")).unwrap();
    std::fs::write(repo.join("snapshots").join(commit).join("m-Q4_K_M.gguf"), "GGUF").unwrap();
    let e = err(locate_hf("Org/Name", Some(&root)));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("has no tokenizer.json") && e.message().contains("--tokenizer: m-Q4_K_M.gguf"), "{e}");

    // A plain folder without tokenizer.json.
    let plain = temp("plain");
    let e = err(locate_hf(plain.to_str().unwrap(), None));
    assert_eq!(e.kind(), ErrorKind::Io, "{e}");
    assert!(e.message().contains("not a hub cache repo folder"), "{e}");
}

#[test]
fn one_place_is_named() {
    let e = ModelPlace::from_options(Some("t.json"), Some("m"), None, None, None).unwrap_err();
    assert!(e.message().contains("named one way"), "{e}");
    let e = ModelPlace::from_options(None, None, Some("/s"), None, None).unwrap_err();
    assert!(e.message().contains("without an Ollama model name"), "{e}");
    let e = ModelPlace::from_options(None, None, None, None, Some("/c")).unwrap_err();
    assert!(e.message().contains("without a Hugging Face model"), "{e}");
    assert_eq!(ModelPlace::from_options(None, None, None, None, None).unwrap(), None);
}

#[cfg(unix)]
#[test]
fn a_model_registers_from_the_ollama_store_and_the_hub_cache() {
    use crate::template::register_model_files_json;
    let root =
        store("reg", ["registry.ollama.ai", "library", "tiny", "latest"], &manifest(json!([model_layer(HEX_MODEL)])));
    let registry = crate::ModelRegistry::builtin();
    let spec = json!({"name": "tiny-local", "ollama_model": "tiny", "ollama_models": root, "context_window": 4096});
    let info = register_model_files_json(&registry, &spec.to_string()).unwrap();
    assert!(info.exact);
    assert_eq!(info.context_window, Some(4096));
    // With a Go template layer, Ollama renders with its own template: the
    // GGUF's count is the closest known, reported as not exact, in the
    // entry and in every fit; a template the host gives is taken as the one.
    let go = manifest(json!([
        model_layer(HEX_MODEL),
        {"mediaType": "application/vnd.ollama.image.template", "digest": format!("sha256:{HEX_TEMPLATE}"), "size": 3}
    ]));
    let root_go = store("reg-go", ["registry.ollama.ai", "library", "tiny", "latest"], &go);
    let spec = json!({"name": "tiny-go", "ollama_model": "tiny", "ollama_models": root_go, "context_window": 4096});
    assert!(!register_model_files_json(&registry, &spec.to_string()).unwrap().exact);
    let conv = r#"[{"role":"user","content":"hello there"}]"#;
    let (_, report) = crate::window::fit_json_in(&registry, conv, r#"{"model":"tiny-go"}"#).unwrap();
    assert!(!report.exact);
    let (_, report) = crate::window::fit_json_in(&registry, conv, r#"{"model":"tiny-local"}"#).unwrap();
    assert!(report.exact);
    let mut w = crate::window::Window::for_model(&registry, "tiny-go", crate::window::Budget::default()).unwrap();
    w.load(crate::chat::Conversation::parse(conv, None).unwrap()).unwrap();
    assert!(!w.preflight(None).unwrap().exact);
    let given = json!({"name": "tiny-go2", "ollama_model": "tiny", "ollama_models": root_go, "context_window": 4096,
        "chat_template": TEMPLATE});
    assert!(register_model_files_json(&registry, &given.to_string()).unwrap().exact);

    let config = json!({"chat_template": TEMPLATE, "bos_token": "<s>", "eos_token": "<|end|>"}).to_string();
    let tokenizer = crate::template::tests_count::tiny_tokenizer_json();
    let (cache, _) = hub("reghf", &[("tokenizer.json", &tokenizer), ("tokenizer_config.json", config.as_bytes())]);
    let spec = json!({"name": "tiny-hf", "hf_model": "Org/Name", "hf_cache": cache, "context_window": 2048});
    assert_eq!(register_model_files_json(&registry, &spec.to_string()).unwrap().context_window, Some(2048));

    let bad = [
        (
            json!({"name": "x", "ollama_model": "nope", "ollama_models": root, "context_window": 10}),
            ErrorKind::UnknownModel,
        ),
        (
            json!({"name": "x", "ollama_model": "../../etc", "ollama_models": root, "context_window": 10}),
            ErrorKind::UnsafePath,
        ),
        (
            json!({"name": "x", "hf_model": "Org/Name", "tokenizer": "t.json", "context_window": 10}),
            ErrorKind::InvalidArgument,
        ),
        (json!({"name": "x", "context_window": 10}), ErrorKind::InvalidArgument),
        (json!({"name": "x", "hf_cache": cache, "context_window": 10}), ErrorKind::InvalidArgument),
    ];
    for (spec, kind) in bad {
        let e = register_model_files_json(&registry, &spec.to_string()).unwrap_err();
        assert_eq!(e.kind(), kind, "{spec}: {e}");
    }
}
