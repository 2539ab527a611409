//! Target `model_locate`: the Ollama name parser and manifest reader and the
//! Hugging Face cache locator (core's `locate`). A fixed temp folder holds
//! an Ollama store (one good model, `library/good:latest`, whose blob starts
//! with GGUF's magic; a file `secret` beside the store) and a hub cache
//! (`models--Org--Good` with `refs/main` and a snapshot). The first byte
//! picks the mode, the rest is the text under test:
//! 0: an Ollama model name, located in the store;
//! 1: a manifest's text, written as `library/fuzz:latest` and located;
//! 2: a Hugging Face repo id (with an optional `@revision`), located;
//! 3: the text of `refs/main` of a second repo, located.
//! Never panics; whatever is found is a file inside the store's `blobs/` or
//! the cache's snapshots, never the secret; a parsed name has no `..` part.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use turnfit::locate::{locate_hf, locate_ollama, OllamaName};

use super::common::{text, Knobs};

const HEX: &str = "abababababababababababababababababababababababababababababababab";

struct Fixture {
    base: PathBuf,
    store: PathBuf,
    cache: PathBuf,
    /// Modes 1 and 3 write files: one input at a time.
    lock: Mutex<()>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let base = std::env::temp_dir().join(format!("turnfit-fuzz-locate-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let store = base.join("store");
        let good = store.join("manifests/registry.ollama.ai/library/good");
        std::fs::create_dir_all(&good).unwrap();
        std::fs::create_dir_all(store.join("manifests/registry.ollama.ai/library/fuzz")).unwrap();
        std::fs::create_dir_all(store.join("blobs")).unwrap();
        let manifest = format!(
            r#"{{"schemaVersion":2,"mediaType":"application/vnd.docker.distribution.manifest.v2+json","config":{{"mediaType":"application/vnd.docker.container.image.v1+json","digest":"sha256:{HEX}","size":4}},"layers":[{{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:{HEX}","size":4}}]}}"#
        );
        std::fs::write(good.join("latest"), manifest).unwrap();
        std::fs::write(store.join("blobs").join(format!("sha256-{HEX}")), b"GGUF").unwrap();
        std::fs::write(base.join("secret"), b"GGUF secret").unwrap();
        let cache = base.join("hub");
        for repo in ["models--Org--Good", "models--Org--Fuzz"] {
            let repo = cache.join(repo);
            std::fs::create_dir_all(repo.join("refs")).unwrap();
            std::fs::create_dir_all(repo.join("snapshots/c0ffee")).unwrap();
            std::fs::write(repo.join("refs/main"), "c0ffee").unwrap();
            std::fs::write(repo.join("snapshots/c0ffee/tokenizer.json"), "{}").unwrap();
        }
        Fixture { base, store, cache, lock: Mutex::new(()) }
    })
}

fn inside(path: &Path, root: &Path) -> bool {
    let (Ok(p), Ok(r)) = (path.canonicalize(), root.canonicalize()) else { return false };
    p.starts_with(r)
}

pub fn check(data: &[u8]) {
    let f = fixture();
    let mut knobs = Knobs::new(data);
    let mode = knobs.byte() % 4;
    let input = text(knobs.rest());
    let _guard = f.lock.lock().unwrap_or_else(|e| e.into_inner());
    match mode {
        0 | 1 => {
            let name = if mode == 0 {
                if let Ok(n) = OllamaName::parse(&input) {
                    for part in [&n.host, &n.namespace, &n.model, &n.tag] {
                        assert!(part.split('/').all(|c| c != ".." && c != "."), "{input:?} parsed to {n}");
                        assert!(!part.is_empty(), "{input:?} parsed to {n}");
                    }
                }
                input.to_string()
            } else {
                let path = f.store.join("manifests/registry.ollama.ai/library/fuzz/latest");
                std::fs::write(path, input.as_bytes()).unwrap();
                "fuzz".to_string()
            };
            if let Ok(found) = locate_ollama(&name, &f.store) {
                assert!(
                    inside(&found.tokenizer, &f.store.join("blobs")),
                    "{name:?} found {}",
                    found.tokenizer.display()
                );
                assert!(!inside(&found.tokenizer, &f.base.join("secret")));
            }
        }
        2 => {
            if let Ok(found) = locate_hf(&input, Some(&f.cache)) {
                // A repo id, or a folder given by path: only the fixture's
                // snapshots hold a tokenizer.json on this machine's temp dir.
                if !Path::new(&*input).is_dir() {
                    assert!(inside(&found.tokenizer, &f.cache), "{input:?} found {}", found.tokenizer.display());
                }
            }
        }
        _ => {
            std::fs::write(f.cache.join("models--Org--Fuzz/refs/main"), input.as_bytes()).unwrap();
            if let Ok(found) = locate_hf("Org/Fuzz", Some(&f.cache)) {
                assert!(
                    inside(&found.tokenizer, &f.cache.join("models--Org--Fuzz/snapshots")),
                    "refs/main {input:?} found {}",
                    found.tokenizer.display()
                );
            }
        }
    }
}
