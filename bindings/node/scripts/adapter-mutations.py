#!/usr/bin/env python3
# Shows that each adapter test can fail: applies one mutation at a time to
# langchain.js / openai-agents.js / adapter-common.js (the fix it removes),
# runs the test that guards it, restores the file. From bindings/node:
#   python3 scripts/adapter-mutations.py
import subprocess, sys, shutil, re
muts = [
 ("no adapter (middleware/filter is a pass-through)", "langchain.js", "      const { request: fitted, report } = await fitModelRequest(request, options, lib, memo)\n", "      const fitted = request; const report = { adapter: {} }\n", "test/langchain.test.js", "replayed"),
 ("no adapter (filter is a pass-through)", "openai-agents.js", "    const { modelData: fitted, report } = await fitModelInput(modelData, agent, options, memo)\n", "    const fitted = modelData; const report = { adapter: {} }\n", "test/openai-agents.test.js", "replayed"),
 ("summarizer not wired (digest only)", "langchain.js", "  const summarize = makeSummarizer(options.summarizer, request.model, lib, request.runtime)\n", "  const summarize = undefined\n", "test/langchain.test.js", "replayed"),
 ("summarizer not wired (digest only)", "openai-agents.js", "  const summarize = makeSummarizer(options.summarizer, agent)\n", "  const summarize = undefined\n", "test/openai-agents.test.js", "replayed"),
 ("no fallback warning", "adapter-common.js", "  if (typeof onWarning === 'function') onWarning(text, report)\n", "  if (false) onWarning(text, report)\n", "test/langchain.test.js", "throws"),
 ("no fallback warning", "adapter-common.js", "  if (typeof onWarning === 'function') onWarning(text, report)\n", "  if (false) onWarning(text, report)\n", "test/openai-agents.test.js", "throws"),
 ("pending ids not passed", "langchain.js", "      pending_calls: [...new Set([...(fitOptions.policy.pending_calls ?? []), ...pending])],\n", "", "test/langchain.test.js", "pending"),
 ("pending ids not passed", "openai-agents.js", "      pending_calls: [...new Set([...(fitOptions.policy.pending_calls ?? []), ...pending])],\n", "", "test/openai-agents.test.js", "pending"),
 ("unknown types not pinned", "langchain.js", "      pinned: [...new Set([...(fitOptions.policy.pinned ?? []), ...unknown])],\n", "", "test/langchain.test.js", "unknown"),
 ("unknown types not pinned", "openai-agents.js", "      pinned: [...new Set([...(fitOptions.policy.pinned ?? []), ...unknown])],\n", "", "test/openai-agents.test.js", "unknown"),
 ("no mapping back (every message rebuilt)", "langchain.js", "    if (index >= 0 && !changed) return inputs[index]\n", "", "test/langchain.test.js", "same objects"),
 ("no mapping back (every item rebuilt)", "openai-agents.js", "    if (index >= 0 && !changed) return items[index]\n", "", "test/openai-agents.test.js", "same objects"),
 ("summarizer call without the nostream tag", "langchain.js", "tags: [NOSTREAM] })", "tags: [] })", "test/langchain.test.js", "nostream"),
 ("writeBack ignored", "langchain.js", "      if (!options.writeBack || !report.changed) return response\n", "      return response\n", "test/langchain.test.js", "writeBack"),
 ("summary not reused", "adapter-common.js", "  const none = { work: items, expand: new Map(), carried: 0 }\n", "  const none = { work: items, expand: new Map(), carried: 0 }\n  return none\n", "test/langchain.test.js", "reuseSummary"),
 ("summary not reused", "adapter-common.js", "  const none = { work: items, expand: new Map(), carried: 0 }\n", "  const none = { work: items, expand: new Map(), carried: 0 }\n  return none\n", "test/openai-agents.test.js", "reuseSummary"),
 ("reuse matches objects only (not ids)", "langchain.js", "  return a === b || (typeof a?.id === 'string' && a.id !== '' && a.id === b?.id)\n", "  return a === b\n", "test/langchain.test.js", "across copies"),
 ("a summarized message matched again (an identical new summary)", "adapter-common.js", "      if (!gone.has(k) && !used.has(k) && !rewritten.has(k) && sameJson(o, sent[k])) {\n        take(k, false)\n        continue outer\n      }\n    }\n    for (const k of rewritten)", "      if (!used.has(k) && !rewritten.has(k) && sameJson(o, sent[k])) {\n        take(k, false)\n        continue outer\n      }\n    }\n    for (const k of rewritten)", "test/langchain.test.js", "reuseSummary"),
 ("no version check", "adapter-common.js", "  if (cmp(v, parseVersion(range.min)) < 0 || cmp(v, parseVersion(range.below)) >= 0) {", "  if (false) {", "test/langchain.test.js", "version"),
]
for name, f, old, new, t, pat in muts:
    src = open(f).read()
    assert src.count(old) == 1, (name, f)
    shutil.copy(f, f + '.bak')
    open(f, 'w').write(src.replace(old, new))
    try:
        r = subprocess.run(['node', '--test', '--test-name-pattern', pat, t], capture_output=True, text=True, timeout=600)
        out = r.stdout
        fails = [l for l in out.splitlines() if l.startswith('not ok')]
        err = re.findall(r"^\s+error: (.*)$", out, re.M)
        print(f"{f} / {name} -> {t} [{pat}]: {'FAILS' if fails else 'still passes'}; {fails[:1]} {err[:1]}")
    finally:
        shutil.move(f + '.bak', f)
