"""Issue 35: the LangChain adapters are lossless and tolerant.

- a message the turn did not change comes back as the same object (id,
  additional_kwargs, response_metadata, content blocks with an image);
- LangGraph's pre-model hook can write the compacted history back to the state
  (RemoveMessage(REMOVE_ALL_MESSAGES) then the messages, ids kept);
- a message type the adapter does not know passes through untouched, counted as
  text, never dropped;
- a framework version outside the tested range says so, naming the range."""

import warnings
from typing import Any, List

import pytest

lc = pytest.importorskip("langchain_core.messages")

import turnfit  # noqa: E402
import turnfit.langchain as tl  # noqa: E402
from agent_loop import agent_loop, tool_pairs_ok  # noqa: E402

IMAGE = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="


def rich_history(rounds: int = 80) -> List[Any]:
    """agent_loop's history as LangChain messages with everything LangChain carries:
    ids, additional_kwargs, response_metadata, and a task with an image block."""
    out: List[Any] = []
    for i, m in enumerate(tl.from_openai(agent_loop(rounds))):
        upd: dict = {"id": f"msg-{i}"}
        if isinstance(m, lc.AIMessage):
            upd["response_metadata"] = {"model_name": "gpt-4o-2024-08-06", "finish_reason": "tool_calls"}
            upd["additional_kwargs"] = {"refusal": None, "x_trace": i}
        if isinstance(m, lc.HumanMessage) and not any(isinstance(p, lc.HumanMessage) for p in out):
            upd["content"] = [{"type": "text", "text": m.content}, {"type": "image_url", "image_url": {"url": IMAGE}}]
        out.append(m.model_copy(update=upd))
    return out


def test_fit_messages_gives_back_the_original_objects_of_unchanged_messages():
    msgs = rich_history()
    full = turnfit.count_conversation(tl.to_openai(msgs))
    out, report = tl.fit_messages(msgs, model="gpt-4o", max_tokens=full // 3, reserve_output=0, policy={"strategy": "summarize"})
    assert report["changed"]
    ids = {m.id: m for m in msgs}
    copies = [m for m in out if m.id in ids and m is not ids[m.id]]
    assert copies, "no tool result was masked or cut"
    originals = [m for m in out if any(m is o for o in msgs)]
    assert len(originals) >= 10
    # The task with its image block is the very object given.
    task = next(m for m in msgs if isinstance(m, lc.HumanMessage))
    assert any(m is task for m in out)
    # Every kept message that came back equal is the original object, and a changed
    # tool result keeps its id and tool_call_id.
    conv = dict(zip((id(m) for m in msgs), tl.to_openai(msgs)))
    for m in out:
        if m.id in ids and m is not ids[m.id]:
            assert isinstance(m, lc.ToolMessage) and m.tool_call_id == ids[m.id].tool_call_id
            assert tl.to_openai([m])[0] != conv[id(ids[m.id])]
    for m in out:
        if isinstance(m, lc.AIMessage) and m.id in ids:
            assert m.response_metadata["model_name"] == "gpt-4o-2024-08-06" and m.additional_kwargs["x_trace"] >= 0
    assert tool_pairs_ok(tl.to_openai(out))


def test_pre_model_hook_keeps_ids_of_the_messages_it_did_not_change():
    """Before issue 35 the hook rebuilt every message from OpenAI dicts: ids,
    metadata and the objects themselves were lost."""
    msgs = rich_history()
    hook = tl.pre_model_hook("gpt-4o", max_tokens=12000, reserve_output=1000)
    r = hook({"messages": msgs})
    out = r["llm_input_messages"]
    assert r["turnfit"]["compaction"]["status"] == "done" and len(out) < len(msgs)
    assert out[0] is msgs[0]
    with_ids = [m for m in out if m.id is not None]
    assert len(with_ids) >= len(out) - 1, "ids lost"  # the summary (or nothing) is new
    assert any(m is msgs[1] for m in out), "the task (with its image) is not the original object"


def test_from_openai_with_originals_returns_the_originals():
    msgs = rich_history(5)
    back = tl.from_openai(tl.to_openai(msgs), originals=msgs)
    assert all(a is b for a, b in zip(back, msgs)) and len(back) == len(msgs)


def test_pre_model_hook_writes_the_compacted_history_back_to_state():
    """write_back=True in a real LangGraph graph: the stored history is replaced by
    the compacted one, the messages it kept with their ids and objects."""
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langgraph.graph import END, START, MessagesState, StateGraph

    msgs = rich_history()
    hook = tl.pre_model_hook("gpt-4o", max_tokens=12000, reserve_output=1000, write_back=True)
    seen: List[Any] = []

    class Model(GenericFakeChatModel):
        def _generate(self, messages: Any, *a: Any, **k: Any) -> Any:
            seen.append(list(messages))
            return super()._generate(messages, *a, **k)

    model = Model(messages=iter([lc.AIMessage("done", id="final")]))

    def pre(state: MessagesState) -> Any:
        update = hook(state)
        update.pop("turnfit")
        return update

    g = StateGraph(MessagesState)
    g.add_node("pre", pre)
    g.add_node("model", lambda s: {"messages": [model.invoke(s["messages"])]})
    g.add_edge(START, "pre")
    g.add_edge("pre", "model")
    g.add_edge("model", END)
    out = g.compile().invoke({"messages": msgs})["messages"]
    assert len(out) < len(msgs)
    assert [m.id for m in seen[0]] == [m.id for m in out[:-1]], "the model saw the stored history"
    by_id = {m.id: m for m in msgs}
    unchanged = [m for m in out if m.id in by_id and m == by_id[m.id]]
    assert len(unchanged) >= 10 and out[0].id == "msg-0"
    assert out[1].content == msgs[1].content and out[1].id == msgs[1].id  # the task, image block and all
    assert tool_pairs_ok(tl.to_openai(out)) and turnfit.count_conversation(tl.to_openai(out)) <= 11000
    # Below the trigger nothing is written.
    small = rich_history(2)
    assert hook({"messages": small}) == {"turnfit": hook({"messages": small})["turnfit"]}


class CustomNote(lc.BaseMessage):
    """A message type of the host's own, which langchain-core's converter refuses."""

    type: str = "custom_note"


def test_an_unknown_message_type_passes_through_untouched_counted_as_text():
    note = CustomNote(content="NOTE: the CI machine has no network " * 20, id="note-1")
    critic = lc.ChatMessage(role="critic", content="CRITIC: check the empty body case", id="critic-1")
    msgs = rich_history()
    msgs[5:5] = [note]
    msgs[40:40] = [critic]
    as_dicts = tl.to_openai(msgs)  # no ValueError
    assert len(as_dicts) == len(msgs)
    with_notes = turnfit.count_conversation(as_dicts)
    without = turnfit.count_conversation(tl.to_openai([m for m in msgs if m is not note and m is not critic]))
    assert with_notes - without >= turnfit.count_tokens(note.content)  # counted as its text
    for fit in (
        lambda: tl.fit_messages(msgs, model="gpt-4o", max_tokens=6000, reserve_output=0)[0],
        lambda: tl.trim_messages(msgs, max_tokens=6000),
        lambda: tl.pre_model_hook("gpt-4o", max_tokens=7000, reserve_output=1000)({"messages": msgs})["llm_input_messages"],
    ):
        out = fit()
        assert len(out) < len(msgs)
        assert any(m is note for m in out) and any(m is critic for m in out), "an unknown message was dropped"
    assert tl.token_counter()(msgs) == with_notes


def test_a_version_outside_the_tested_range_says_so():
    with pytest.warns(tl.UntestedVersionWarning, match=r"langchain-core 1\.8\.x \(tested: 1\.8\.3\); langchain-core 1\.6\.13 is installed"):
        tl.check_version("langchain-core", "1.6.13")
    with pytest.raises(ImportError, match=r"supports langchain 1\.5\.x \(tested: 1\.5\.2\); langchain 0\.3\.27 is installed"):
        tl.check_version("langchain", "0.3.27")
    with pytest.raises(ImportError, match=r"langgraph 1\.2\.x"):
        tl.check_version("langgraph", "2.0.0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for dist in tl.TESTED_VERSIONS:
            assert tl.check_version(dist) == tl.TESTED_VERSIONS[dist][2]  # the pinned ones: silent
