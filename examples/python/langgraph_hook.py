"""A LangGraph-style pre-model hook backed by turnfit (needs langchain-core:
pip install 'turnfit[langchain]'). The hook receives the graph state, runs a
pre-flight on its messages and, when they no longer fit, gives the model a
compacted copy; the stored history is untouched.

    python examples/python/langgraph_hook.py
"""

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

import turnfit
from turnfit.langchain import pre_model_hook, to_openai

hook = pre_model_hook("gpt-4o", context_window=8_000, reserved_output=1_000)

state = {"messages": [SystemMessage("You are a research agent."), HumanMessage("Summarize the repository.")]}
for turn in range(1, 31):
    result = hook(state)  # what create_react_agent(..., pre_model_hook=hook) would call
    info = result["turnfit"]
    model_input = result["llm_input_messages"]
    if info["compaction"]:
        print(f"turn {turn:2}: {info['preflight']['verdict']} ({info['preflight']['prompt_tokens']} tokens); "
              f"model sees {len(model_input)} of {len(state['messages'])} messages, "
              f"{turnfit.count_conversation(to_openai(model_input))} tokens")
    # the user asks, the stub model calls a tool, the tool answers
    state["messages"].append(HumanMessage(f"Now look at file {turn}."))
    call = {"name": "read_file", "args": {"path": f"src/file_{turn}.py"}, "id": f"call_{turn}"}
    state["messages"].append(AIMessage("", tool_calls=[call]))
    state["messages"].append(ToolMessage("\n".join(f"line {i} of file {turn}" for i in range(120)),
                                         tool_call_id=f"call_{turn}"))

final = hook(state)
assert final["turnfit"]["compaction"] is not None
assert turnfit.count_conversation(to_openai(final["llm_input_messages"])) <= 7_000
print(f"history {len(state['messages'])} messages; model input {len(final['llm_input_messages'])} messages")
