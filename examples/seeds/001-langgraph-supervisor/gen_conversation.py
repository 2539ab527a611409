"""Writes conversation.json: a LangGraph-style platform-engineering supervisor
(made for this scenario, OpenAI chat shape) that routes a user's requests to
sub-agents as tools. Six requests, each answered after one or two tool rounds
with large outputs (PR lists, pipeline logs, RAG passages); the last request's
RAG call never returned (the document's "orphaned tool call"). Deterministic:
`python3 gen_conversation.py > conversation.json` reproduces the file."""
import json

SYSTEM = ("You are the platform engineering supervisor. Route each request to the right sub-agent "
          "(github, argocd, pagerduty, rag) through its tool, then answer from what the tools return. "
          "Quote identifiers exactly.")
TOOLS = [
    {"type": "function", "function": {"name": name, "description": desc, "parameters": {
        "type": "object", "properties": {"query": {"type": "string", "description": "What to ask the sub-agent."}},
        "required": ["query"]}}}
    for name, desc in [("github", "Ask the GitHub sub-agent about repositories, pull requests and workflow runs."),
                       ("argocd", "Ask the Argo CD sub-agent about applications and their sync status."),
                       ("pagerduty", "Ask the PagerDuty sub-agent about incidents and on-call schedules."),
                       ("rag", "Search the platform runbooks and design notes.")]
]

def pr_list(repo, n, start):
    rows = []
    for i in range(n):
        k = start + i
        rows.append(f"#{k} [{('open', 'merged', 'closed')[k % 3]}] {repo}: "
                    f"{('fix', 'feat', 'chore', 'docs')[k % 4]}({('agents', 'helm', 'ci', 'rag', 'ui')[k % 5]}): "
                    f"change {k} by dev{k % 7}, {10 + (k * 37) % 400} lines, checks {('passing', 'failing')[k % 5 == 0]}")
    return "\n".join(rows)

def log_lines(app, n):
    return "\n".join(f"2025-10-{1 + i % 28:02d}T{i % 24:02d}:{(i * 7) % 60:02d}:00Z {app} "
                     f"{('INFO', 'WARN', 'ERROR')[i % 3 == 0 and 2 or i % 2]} sync step {i}: "
                     f"resource Deployment/{app}-{i % 4} {('Synced', 'OutOfSync', 'Progressing')[i % 3]}"
                     for i in range(n))

def passages(topic, n):
    return "\n\n".join(f"[runbook {topic} §{i}] When the {topic} alert fires, check the dashboard panel {i}, "
                       f"compare the error budget burn rate against the 2% hourly threshold, and page the "
                       f"secondary on-call if the rate stays above it for {5 + i} minutes." for i in range(n))

messages = [{"role": "system", "content": SYSTEM}]
call = 0
def ask(text):
    messages.append({"role": "user", "content": text})
def tool_round(tool, query, output):
    global call
    call += 1
    cid = f"call_{tool}_{call:02d}"
    messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": cid, "type": "function", "function": {"name": tool, "arguments": json.dumps({"query": query})}}]})
    if output is not None:
        messages.append({"role": "tool", "tool_call_id": cid, "content": output})
    return cid
def answer(text):
    messages.append({"role": "assistant", "content": text})

ask("show all PRs in ai-platform-engineering")
tool_round("github", "list pull requests in ai-platform-engineering", pr_list("ai-platform-engineering", 90, 300))
answer("There are 90 pull requests; 30 open. The failing checks are on #300, #305, #310 and others ending in 0 or 5.")
ask("Why is the agents app out of sync in Argo CD?")
tool_round("argocd", "sync status and recent events of the agents application", log_lines("agents", 110))
answer("The agents application is OutOfSync on Deployment/agents-1; the last errors are at sync steps 99 and 105.")
ask("Any incidents for the rag service this week?")
tool_round("pagerduty", "incidents for service rag this week", log_lines("rag-incidents", 60))
tool_round("rag", "runbook for rag latency alerts", passages("rag-latency", 25))
answer("Two incidents, both latency alerts; the runbook says to compare the burn rate with the 2% hourly threshold.")
ask("List the merged helm PRs from the last batch.")
tool_round("github", "merged pull requests touching helm", pr_list("ai-platform-engineering", 60, 390))
answer("Merged helm changes: #393, #408, #423 and #438.")
ask("What does the design note say about the supervisor's pre-flight check?")
tool_round("rag", "supervisor pre-flight context check design note", passages("supervisor-preflight", 10))
answer("It estimates system, history, query and tool-schema tokens before each call and compacts past 80%.")
ask("Summarize the open incidents and who is on call.")
orphan = tool_round("rag", "open incidents and the on-call schedule", None)

json.dump({"model": "gpt-4o", "tools": TOOLS, "messages": messages}, __import__("sys").stdout, indent=1)
print()
