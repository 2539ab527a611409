"""register_model(name, ollama=... | hf=...): a model's files found where
its host keeps them (issue 50 item 4): a Hugging Face hub cache laid out as
huggingface_hub lays it out (refs/main, snapshots/<commit>/ symlinks into
blobs/) around the tiny byte-level fixture, and an Ollama store (a manifest
shaped as Ollama's manifest/manifest.go WriteManifest writes it) around
llama.cpp's Qwen2 vocabulary GGUF (llama-cpp-python 0.3.36 sdist, MIT,
cached by scripts/open-models.sh; skipped without it)."""

import hashlib
import json
import os
from pathlib import Path

import pytest

import turnfit

ROOT = Path(__file__).resolve().parents[3]
BYTE_LEVEL = ROOT / "tests" / "vectors" / "files" / "tiny-byte-level.tokenizer.json"
TEMPLATE = (
    "{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}"
    "{% if add_generation_prompt %}assistant:{% endif %}"
)
QWEN2_GGUF = (
    ROOT / "target/open-models/pypi/llama-cpp-python/llama_cpp_python-0.3.36/vendor/llama.cpp/models/ggml-vocab-qwen2.gguf"
)
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def hub_cache(root: Path) -> Path:
    repo = root / "models--Org--Tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "blobs").mkdir()
    snap = repo / "snapshots" / COMMIT
    snap.mkdir(parents=True)
    (repo / "refs" / "main").write_text(COMMIT)
    files = {
        "tokenizer.json": BYTE_LEVEL.read_bytes(),
        "tokenizer_config.json": json.dumps({"chat_template": TEMPLATE}).encode(),
    }
    for name, data in files.items():
        blob = hashlib.sha256(data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        os.symlink(Path("../../blobs") / blob, snap / name)
    return root


def ollama_store(root: Path, gguf: Path, manifest: str = "") -> Path:
    digest = hashlib.sha256(gguf.read_bytes()).hexdigest()
    (root / "blobs").mkdir(parents=True)
    os.symlink(gguf, root / "blobs" / f"sha256-{digest}")
    config = b'{"model_format":"gguf","model_family":"qwen2","architecture":"amd64","os":"linux"}'
    config_digest = hashlib.sha256(config).hexdigest()
    (root / "blobs" / f"sha256-{config_digest}").write_bytes(config)
    mdir = root / "manifests" / "registry.ollama.ai" / "library" / "qwen2"
    mdir.mkdir(parents=True)
    manifest = manifest or json.dumps({
        "schemaVersion": 2,
        "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
        "config": {"mediaType": "application/vnd.docker.container.image.v1+json",
                   "digest": f"sha256:{config_digest}", "size": len(config)},
        "layers": [{"mediaType": "application/vnd.ollama.image.model",
                    "digest": f"sha256:{digest}", "size": gguf.stat().st_size}],
    })
    (mdir / "0.5b").write_text(manifest)
    return root


def test_a_hub_cache_model_registers_and_fits_exactly(tmp_path):
    cache = hub_cache(tmp_path)
    msgs = [{"role": "user", "content": f"question {i}"} for i in range(40)]
    by_file = turnfit.register_model("tiny-file", tokenizer=BYTE_LEVEL, chat_template=TEMPLATE, context_window=300)
    assert turnfit.register_model("tiny-hub", hf="Org/Tiny", hf_cache=cache, context_window=300) == by_file == 1
    snapshot = cache / "models--Org--Tiny" / "snapshots" / COMMIT
    assert turnfit.register_model("tiny-snap", hf=snapshot, context_window=300) == 1
    _, want = turnfit.fit(msgs, model="tiny-file")
    for name in ("tiny-hub", "tiny-snap"):
        assert turnfit.lookup_model(name)["exact"] is True
        _, report = turnfit.fit(msgs, model=name)
        assert report["tokens_before"] == want["tokens_before"]
        assert report["tokens_after"] <= report["limit_tokens"]


def test_bad_locations_raise_specific_errors(tmp_path):
    cache = hub_cache(tmp_path / "hub")
    with pytest.raises(turnfit.UnknownModelError, match="did you mean: Org/Tiny"):
        turnfit.register_model("m", hf="Org/Tinny", hf_cache=cache, context_window=100)
    with pytest.raises(turnfit.UnsafePathError):
        turnfit.register_model("m", hf="Org/..", hf_cache=cache, context_window=100)
    with pytest.raises(turnfit.UnsafePathError):
        turnfit.register_model("m", ollama="../../etc", ollama_models=tmp_path, context_window=100)
    with pytest.raises(turnfit.IoError, match="no such folder"):
        turnfit.register_model("m", ollama="qwen2", ollama_models=tmp_path / "none", context_window=100)
    (tmp_path / "store" / "manifests" / "registry.ollama.ai" / "library" / "x").mkdir(parents=True)
    (tmp_path / "store" / "manifests" / "registry.ollama.ai" / "library" / "x" / "latest").write_text("{not json")
    with pytest.raises(turnfit.InvalidJsonError, match="Ollama manifest"):
        turnfit.register_model("m", ollama="x", ollama_models=tmp_path / "store", context_window=100)
    with pytest.raises(turnfit.UnknownModelError, match="no tag '8b'"):
        turnfit.register_model("m", ollama="x:8b", ollama_models=tmp_path / "store", context_window=100)
    with pytest.raises(TypeError, match="give one"):
        turnfit.register_model("m", tokenizer=BYTE_LEVEL, ollama="x", context_window=100)
    with pytest.raises(TypeError, match="goes with hf="):
        turnfit.register_model("m", hf_cache=cache, context_window=100)


@pytest.mark.skipif(not QWEN2_GGUF.exists(), reason="run scripts/open-models.sh to cache the Qwen2 vocabulary GGUF")
def test_an_ollama_model_counts_as_its_gguf(tmp_path):
    store = ollama_store(tmp_path, QWEN2_GGUF)
    msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Héllo, what is 2+2?"}]
    turnfit.register_model("qwen2-gguf", tokenizer=QWEN2_GGUF, context_window=4096)
    turnfit.register_model("qwen2-ollama", ollama="qwen2:0.5b", ollama_models=store, context_window=4096)
    _, want = turnfit.fit(msgs, model="qwen2-gguf")
    _, got = turnfit.fit(msgs, model="qwen2-ollama")
    assert got["exact"] is True
    assert got["tokens_before"] == want["tokens_before"] > 0
