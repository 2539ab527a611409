"""Seed 001's orphaned-call recovery written back to a LangGraph graph's state in one
call (issue 53): ``turnfit.langchain.repair_update`` repairs the history, keeps every
unchanged message as the same object and returns the remove-all + new-list update the
``add_messages`` reducer needs. Checked against a real ``StateGraph`` with a
checkpointer (langgraph pinned in requirements-test.txt) and LangGraph's own
chat-history validation, the check that raised ``INVALID_CHAT_HISTORY``."""

import pytest

import turnfit
import turnfit.langchain as ck

graph_mod = pytest.importorskip("langgraph.graph")
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage  # noqa: E402
from langgraph.checkpoint.memory import InMemorySaver  # noqa: E402
from langgraph.graph import END, START, MessagesState, StateGraph  # noqa: E402
from langgraph.prebuilt.chat_agent_executor import _validate_chat_history  # noqa: E402


def _history():
    return [
        SystemMessage("You are the platform engineer supervisor.", id="sys"),
        HumanMessage("List the open PRs and ask the RAG agent about the runbook.", id="h1"),
        AIMessage("", id="a1", tool_calls=[
            {"name": "list_prs", "args": {}, "id": "call_prs", "type": "tool_call"},
            {"name": "rag_agent", "args": {"q": "runbook"}, "id": "call_rag_07", "type": "tool_call"},
        ]),
        ToolMessage("3 open PRs", tool_call_id="call_prs", id="t1"),
    ]


def _graph():
    g = StateGraph(MessagesState)
    g.add_node("noop", lambda state: {})
    g.add_edge(START, "noop")
    g.add_edge("noop", END)
    return g.compile(checkpointer=InMemorySaver())


def test_repair_update_writes_the_repaired_history_back_in_one_call():
    graph = _graph()
    config = {"configurable": {"thread_id": "seed-001"}}
    graph.update_state(config, {"messages": _history()})
    before = graph.get_state(config).values["messages"]
    with pytest.raises(ValueError, match="do not have a corresponding ToolMessage"):
        _validate_chat_history(before)
    err = "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few of " \
          "those tool calls: [{'name': 'rag_agent', 'args': {'q': 'runbook'}, 'id': 'call_rag_07', 'type': 'tool_call'}]"
    c = turnfit.classify("other", 0, err)
    assert (c["action"], c["tool_call_ids"]) == ("repair_history", ["call_rag_07"])

    update = ck.repair_update(before, "Tool interrupted")
    graph.update_state(config, update)
    after = graph.get_state(config).values["messages"]
    _validate_chat_history(after)  # LangGraph's own check now passes
    assert [type(m).__name__ for m in after] == [
        "SystemMessage", "HumanMessage", "AIMessage", "ToolMessage", "ToolMessage"]
    assert [m.id for m in after[:4]] == ["sys", "h1", "a1", "t1"]
    synth = after[4]
    assert (synth.tool_call_id, synth.content) == ("call_rag_07", "Tool interrupted")
    # Written back, not appended: nothing is duplicated.
    assert len(after) == len(before) + 1
    # A history with nothing to repair gives no update.
    assert ck.repair_update(after) == {}


def test_repair_update_keeps_unchanged_messages_as_the_same_objects():
    h = _history()
    update = ck.repair_update(h, key="history")
    ops = update["history"]
    assert type(ops[0]).__name__ == "RemoveMessage"
    assert all(a is b for a, b in zip(ops[1:5], h))
    assert ops[5].tool_call_id == "call_rag_07"
    assert ops[5].content  # turnfit's default text
