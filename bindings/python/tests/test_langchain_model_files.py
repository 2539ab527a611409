"""Issue 50's must-show through a Python adapter: a real agent trajectory
fitted by ``turnfit.langchain.fit_messages`` (LangChain messages, the
framework's own ``FakeListChatModel`` summarizing) for open-weight models
registered from their files: Qwen3, Llama 3 and 3.1 on mini-swe-agent's
astroid-1866 (199 messages, tool calls), Gemma 3 (whose template refuses
the tool role, as transformers does, and requires user and assistant turns
to alternate) on a user/assistant chat. At several
budgets, the fitted prompt is never over the limit by the model's own count:
the core's template count of the result, taken afresh (equal to
transformers' ``apply_chat_template(tokenize=True)`` on these files:
core/tests/chat_count.rs, scripts/templates.sh). Each model is skipped with
a message when its files are not cached (scripts/templates.sh fetches them)."""

import json
from pathlib import Path

import pytest

lc = pytest.importorskip("langchain_core.messages")
from langchain_core.language_models.fake_chat_models import FakeListChatModel  # noqa: E402

import turnfit  # noqa: E402
import turnfit.langchain as ck  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
NPM = ROOT / "target" / "open-models" / "npm"
COLLECTION = (ROOT / "target" / "open-models" / "pypi" / "llama-cpp-python" / "llama_cpp_python-0.3.36" / "vendor"
              / "llama.cpp" / "models" / "templates")
ASTROID = ROOT / "tests" / "fixtures" / "trajectories" / "mini-swe-agent-astroid-1866.openai.json"
GOLDBACH = ROOT / "tests" / "fixtures" / "chats" / "openhands-goldbach-chat.openai.json"

# name, npm package, template from the collection (None: the package's own), conversation, budgets
MODELS = [
    ("qwen3-files", "qwen3", None, ASTROID, (4096, 8192, 16384)),
    ("llama3-files", "llama3", None, ASTROID, (4096, 8192, 16384)),
    ("llama3.1-files", "llama3", "meta-llama-Llama-3.1-8B-Instruct.jinja", ASTROID, (4096, 8192, 16384)),
    # Gemma 3's template requires user and assistant turns to alternate:
    # where compaction leaves two user messages in a row, the fit joins them.
    ("gemma3-files", "gemma3", None, GOLDBACH, (60, 90, 120)),
]


def messages_of(path):
    doc = json.loads(path.read_text())
    messages = doc["messages"] if isinstance(doc, dict) else doc
    if path == GOLDBACH:
        # It ends on an assistant's pending tool call: a fit answers it with a
        # synthetic tool result, a role Gemma 3's template refuses.
        messages = messages[:-1]
    return messages


def own_count(name, messages):
    """The model's own count of a request, afresh (a fit that cuts nothing)."""
    _, report = turnfit.fit(messages, model=name, max_tokens=1_000_000)
    assert report["exact"] is True
    return report["tokens_before"]


@pytest.mark.parametrize("name,package,template,conversation,budgets", MODELS,
                         ids=["qwen3", "llama3", "llama3.1", "gemma3"])
def test_fit_messages_never_over_for_a_model_registered_from_files(name, package, template, conversation, budgets):
    tokenizer = NPM / f"tokenizer-{package}" / "package" / "models" / "tokenizer.json"
    if not tokenizer.exists():
        pytest.skip(f"{tokenizer} not cached: run scripts/templates.sh")
    source = None
    if template is not None:
        if not (COLLECTION / template).exists():
            pytest.skip(f"{COLLECTION / template} not cached: run scripts/templates.sh")
        source = (COLLECTION / template).read_text()
    turnfit.register_model(name, tokenizer=tokenizer, chat_template=source, context_window=131072)
    msgs = ck.from_openai(messages_of(conversation))
    before = own_count(name, ck.to_openai(msgs))
    summarizer = FakeListChatModel(responses=["The agent explored the repository and edited the failing module."] * 50)
    for max_tokens in budgets:
        out, report = ck.fit_messages(msgs, summarizer, model=name, max_tokens=max_tokens,
                                      reserve_output=max_tokens // 8)
        after = own_count(name, ck.to_openai(out))
        assert report["exact"] is True
        assert report["tokens_before"] == before
        assert report["tokens_after"] == after, (max_tokens, report["tokens_after"], after)
        assert after <= report["limit_tokens"], f"{name} at {max_tokens}: {after} over {report['limit_tokens']}"
        assert not report["insufficient"]
        assert after < before
