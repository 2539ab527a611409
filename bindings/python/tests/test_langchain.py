import pytest

lc = pytest.importorskip("langchain_core.messages")  # pinned in requirements-test.txt; see test_langchain_is_installed

import turnfit
import turnfit.langchain as ck
from agent_loop import agent_loop, tool_pairs_ok


def test_langchain_is_installed():
    import langchain_core

    assert langchain_core.__version__ == ck.TESTED_VERSIONS["langchain-core"][2]


def _recipe_count(messages, enc):
    """OpenAI's published counting recipe, computed independently with tiktoken."""
    n = 3
    for m in messages:
        n += 3 + len(enc.encode(m["role"])) + len(enc.encode(m["content"]))
        if m.get("name"):
            n += 1 + len(enc.encode(m["name"]))
    return n


def test_token_counter_is_exact():
    import tiktoken

    enc = tiktoken.get_encoding("o200k_base")
    msgs = [lc.SystemMessage("You are terse."), lc.HumanMessage("Count me, please: 日本語 and emoji 👍🏽."),
            lc.AIMessage("Sure."), lc.HumanMessage("Again " * 50)]
    counter = ck.token_counter("gpt-4o")
    assert counter(msgs) == _recipe_count(ck.to_openai(msgs), enc)
    assert counter([]) == 0
    with pytest.raises(turnfit.UnknownModelError):
        ck.token_counter("gtp-4o")


def test_counter_works_inside_langchains_trim_messages():
    msgs = ck.from_openai([m for m in agent_loop(10) if m["role"] in ("system", "user")] + [
        {"role": "assistant", "content": "step " * 200}, {"role": "user", "content": "more"}])
    out = lc.trim_messages(msgs, max_tokens=300, token_counter=ck.token_counter("gpt-4o"),
                           strategy="last", include_system=True, start_on="human")
    assert ck.token_counter("gpt-4o")(out) <= 300
    assert isinstance(out[0], lc.SystemMessage)


def test_converters_round_trip_agent_loop():
    d = agent_loop(12)
    msgs = ck.from_openai(d)
    assert any(isinstance(m, lc.ToolMessage) for m in msgs)
    back = ck.to_openai(msgs)
    assert len(back) == len(d)
    assert [m["role"] for m in back] == [m["role"] for m in d]
    assert turnfit.count_conversation(back) == turnfit.count_conversation(
        [{**m, "content": m["content"] or ""} for m in d])


def test_trim_never_splits_tool_pairs_where_langchain_can():
    d = agent_loop(80)
    msgs = ck.from_openai(d)
    full = turnfit.count_conversation(ck.to_openai(msgs))
    orphans_lc = 0
    for budget in range(3000, full, max(1, (full - 3000) // 12)):
        ours = ck.trim_messages(msgs, max_tokens=budget, model="gpt-4o")
        od = ck.to_openai(ours)
        assert tool_pairs_ok(od), budget
        assert turnfit.count_conversation(od) <= budget
        assert isinstance(ours[0], lc.SystemMessage)
        last_user = [m.content for m in msgs if isinstance(m, lc.HumanMessage)][-1]
        assert last_user in [m.content for m in ours if isinstance(m, lc.HumanMessage)]
        theirs = lc.trim_messages(msgs, max_tokens=budget, token_counter=ck.token_counter("gpt-4o"),
                                  strategy="last", include_system=True, allow_partial=False)
        orphans_lc += not tool_pairs_ok(ck.to_openai(theirs))
    print(f"\nLangChain trim_messages left orphaned tool results at {orphans_lc} of the budgets; turnfit at none")


def test_pre_model_hook_compacts_when_needed():
    hook = ck.pre_model_hook("gpt-4o", max_tokens=12000, reserve_output=1000)
    small = {"messages": ck.from_openai(agent_loop(3))}
    r = hook(small)
    assert r["turnfit"]["preflight"]["verdict"] == "fits" and r["turnfit"]["compaction"] is None
    assert r["llm_input_messages"] == small["messages"]
    big = {"messages": ck.from_openai(agent_loop(80))}
    r = hook(big)
    assert r["turnfit"]["preflight"]["verdict"] != "fits"
    assert r["turnfit"]["compaction"]["status"] == "done"
    out = ck.to_openai(r["llm_input_messages"])
    assert tool_pairs_ok(out)
    assert turnfit.count_conversation(out) <= 11000
    assert len(big["messages"]) > len(out)  # the state itself was not modified


def test_pre_model_hook_without_write_back_carries_the_summary_instead_of_summarizing_again():
    """The graph keeps the full history (write_back=False): the next call over the
    trigger sends the last summary in place of the messages it replaced (the turn
    report's carry, found again by the JSON of the converted messages), so the
    summarizer is not asked about those messages again: it folds the carried summary
    with the newer ones. The results the first turn masked or cut (not summarized)
    are not carried, so the history is still over the trigger and the summarizer
    runs again, on the newer messages only."""
    prompts = []

    def summarize(request):
        prompts.append(request["prompt"])
        return "SUMMARY: the agent read the files."

    hook = ck.pre_model_hook("gpt-4o", max_tokens=12000, reserve_output=1000, trigger_ratio=0.8,
                             target_ratio=0.5, policy={"strategy": "summarize"}, summarize=summarize)
    history = ck.from_openai(agent_loop(80)[:-1])
    r1 = hook({"messages": history})
    first = r1["turnfit"]["compaction"]["report"]
    assert first["summary"]["source"] == "host" and first["carried"] is None
    span = len(first["carry"]["replaced"])
    assert span == first["summary"]["messages"] > 0
    n1 = len(prompts)
    # The next model call: the same stored history (new objects, as a checkpointer
    # hands back) plus one round.
    more = ck.from_openai(agent_loop(81))[len(history):]
    reloaded = ck.from_openai(ck.to_openai(history))
    r2 = hook({"messages": reloaded + more})
    report = r2["turnfit"]["compaction"]["report"]
    assert report["carried"] == {"index": 2, "messages": span}
    assert report["summary"]["folded_previous"]
    # No prompt of the second turn holds a tool result of the carried span; they
    # hold the carried summary and newer results.
    again = "\n".join(prompts[n1:])
    d = ck.to_openai(history)
    assert "SUMMARY: the agent read the files." in again
    assert not [i for i in range(2, 2 + span) if d[i]["role"] == "tool" and d[i]["content"][:60] in again]
    assert any(d[i]["role"] == "tool" and d[i]["content"][:60] in again for i in range(2 + span, len(d)))
    # The next carry stands for the first span and the newly summarized messages.
    assert report["carry"]["replaced"][:span] == first["carry"]["replaced"]
    assert len(report["carry"]["replaced"]) == span + report["summary"]["messages"] - 1
    out = r2["llm_input_messages"]
    assert out[-1] is more[-1]  # unchanged messages come back as the same objects
    assert turnfit.count_conversation(ck.to_openai(out)) <= 11000


def test_real_trajectories_through_the_adapter():
    """The real agent runs in tests/fixtures/trajectories (OpenAI shape): converted
    to LangChain messages and back, counted exactly, trimmed at several budgets."""
    import json
    from pathlib import Path

    root = Path(__file__).resolve().parents[3] / "tests" / "fixtures" / "trajectories"
    fixtures = sorted(root.glob("*.openai.json"))
    assert len(fixtures) >= 5
    fitted = refused = early = 0
    for f in fixtures:
        doc = json.loads(f.read_text())
        conv = doc["messages"] if isinstance(doc, dict) else doc
        msgs = ck.from_openai(conv)
        assert len(msgs) == len(conv)
        full = ck.token_counter("gpt-4o")(msgs)
        assert full == turnfit.count_conversation(ck.to_openai(msgs))
        for frac in (0.9, 0.6, 0.4):
            budget = int(full * frac)
            try:
                out = ck.to_openai(ck.trim_messages(msgs, max_tokens=budget, tool_output_max=1500))
            except turnfit.DoesNotFitError:
                # Only at the tightest budget may the protected set (system,
                # task, latest user message, newest round) be bigger than it;
                # at any budget when the system prompt and task alone exceed
                # its prompt room (the default reserve is a quarter):
                # swe-agent-missing-colon-fc's are 969 of its 1,825 tokens.
                assert frac == 0.4 or turnfit.count_conversation(conv[:2]) > budget * 3 // 4, (f.name, budget)
                refused += 1
                early += frac > 0.4
                continue
            fitted += 1
            assert tool_pairs_ok(out), (f.name, budget)
            assert turnfit.count_conversation(out) <= budget, (f.name, budget)
    print(f"\nreal trajectories: {fitted} fits, {refused} refused with DoesNotFitError")
    # Compaction works on rounds (issue 13): at 90% and 60% every run fits
    # whose system prompt and task leave room.
    assert fitted >= 2 * len(fixtures) - early and fitted + refused == 3 * len(fixtures)


def test_pre_model_hook_summarizes_with_a_langchain_model_and_never_overflows():
    """Issue 31 bug 2: with policy summarize and no summarizer the hook handed the
    model the unchanged, overflowing history. Now a LangChain chat model (the fake
    one from langchain-core) writes the summary; without one, the digest does, said so."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    model = FakeListChatModel(responses=["The agent listed files and fixed parse_header."] * 20)
    policy = {"strategy": "summarize", "mask": {"enabled": False}}
    big = {"messages": ck.from_openai(agent_loop(80))}
    texts = {}
    for summarize, source in ((model, "host"), (None, "digest")):
        hook = ck.pre_model_hook("gpt-4o", max_tokens=12000, reserve_output=1000, policy=policy, summarize=summarize)
        r = hook(big)
        report = r["turnfit"]["compaction"]["report"]
        assert report["summary"]["source"] == source, report["summary"]
        out = ck.to_openai(r["llm_input_messages"])
        assert tool_pairs_ok(out)
        assert turnfit.count_conversation(out) <= 11000
        texts[source] = str(out)
    assert "fixed parse_header" in texts["host"] and "fixed parse_header" not in texts["digest"]
