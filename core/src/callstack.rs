//! Agent call stacks: which agent called which, with cycle and depth checks.
//!
//! A [`CallStack`] is immutable. [`CallStack::enter`] returns a *new* stack
//! one frame deeper and leaves the original untouched, so a planner that fans
//! out to three workers in parallel hands each branch its own stack and the
//! branches can never see (or corrupt) each other's frames. Frames are shared
//! between stacks through `Arc`, so entering costs one small allocation, not
//! a copy of the chain.
//!
//! Re-entering an agent already on the stack is a cycle
//! ([`ErrorKind::CycleDetected`]), including a self-handoff ("coder ->
//! coder"). Going past the maximum depth (default [`DEFAULT_MAX_DEPTH`]) is
//! [`ErrorKind::DepthExceeded`]. Both errors carry the whole chain, e.g.
//! `planner -> coder -> reviewer -> planner`.
//!
//! Cycle detection is O(log n) per enter: every frame also holds a persistent
//! hash trie of the names on its chain (16-way, path-copied on insert, so a
//! branch shares every node it did not change with its parent). Nothing
//! recurses over the chain: building error messages walks it with a loop, and
//! [`Frame`]'s `Drop` unlinks the chain iteratively, because the default
//! recursive drop of a 100,000-frame `Arc` list overflows the thread's stack.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::limits::{self, MAX_AGENT_NAME_BYTES, MAX_CALLSTACK_DEPTH};
use crate::{Error, ErrorKind, Result};

/// The maximum depth of a stack built with [`CallStack::new`]'s default: deep
/// enough for planner -> worker -> sub-worker chains, shallow enough to stop a
/// runaway delegation loop early.
pub const DEFAULT_MAX_DEPTH: usize = 5;

/// An immutable agent call stack. Cloning is O(1) and shares frames.
#[derive(Clone)]
pub struct CallStack {
    top: Option<Arc<Frame>>,
    max_depth: usize,
}

struct Frame {
    agent: Arc<str>,
    depth: usize,
    parent: Option<Arc<Frame>>,
    names: Arc<Node>,
}

impl std::fmt::Debug for CallStack {
    /// The chain, not the frames: a derived `Debug` would recurse once per
    /// frame and overflow the stack on a deep chain.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CallStack").field("agents", &self.agents()).field("max_depth", &self.max_depth).finish()
    }
}

impl Drop for Frame {
    /// Unlinks the parent chain in a loop: each parent whose last reference
    /// was this frame is taken apart here instead of by a nested drop call.
    fn drop(&mut self) {
        let mut next = self.parent.take();
        while let Some(frame) = next {
            match Arc::try_unwrap(frame) {
                Ok(mut f) => next = f.parent.take(),
                Err(_) => break, // still shared: someone else's chain now
            }
        }
    }
}

/// The JSON form of a stack: `{"agents": [...], "depth": n, "max_depth": m}`,
/// outermost agent first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct CallStackJson {
    /// Agent names, outermost (the first caller) first.
    pub agents: Vec<String>,
    /// Number of agents on the stack (ignored on input).
    #[serde(default)]
    pub depth: usize,
    /// The maximum depth ([`DEFAULT_MAX_DEPTH`] when absent on input).
    #[serde(default = "default_max_depth")]
    pub max_depth: usize,
}

fn default_max_depth() -> usize {
    DEFAULT_MAX_DEPTH
}

impl Default for CallStack {
    fn default() -> Self {
        CallStack { top: None, max_depth: DEFAULT_MAX_DEPTH }
    }
}

impl CallStack {
    /// An empty stack allowing `max_depth` agents (1 ..= [`MAX_CALLSTACK_DEPTH`]).
    pub fn new(max_depth: usize) -> Result<CallStack> {
        if max_depth == 0 {
            return Err(Error::invalid_argument("max_depth must be at least 1"));
        }
        if max_depth > MAX_CALLSTACK_DEPTH {
            return Err(Error::new(
                ErrorKind::LimitExceeded,
                format!("max_depth {max_depth} is over the limit of {MAX_CALLSTACK_DEPTH}"),
            ));
        }
        Ok(CallStack { top: None, max_depth })
    }

    /// The stack with `agent` called from the current top. `self` is not
    /// changed. Errors: `CycleDetected` when `agent` is already on the stack,
    /// `DepthExceeded` when the stack is full, `InvalidArgument` for an empty
    /// name or one with control characters, `LimitExceeded` for a name over
    /// [`MAX_AGENT_NAME_BYTES`].
    pub fn enter(&self, agent: &str) -> Result<CallStack> {
        check_name(agent)?;
        let hash = hash_of(agent);
        if let Some(top) = &self.top {
            if contains(&top.names, hash, agent) {
                return Err(Error::new(
                    ErrorKind::CycleDetected,
                    format!("agent call cycle: {} (agent '{agent}' is already on the stack)", self.chain_with(agent)),
                ));
            }
        }
        if self.depth() >= self.max_depth {
            return Err(Error::new(
                ErrorKind::DepthExceeded,
                format!(
                    "agent call depth {} exceeds the maximum of {}: {}",
                    self.depth() + 1,
                    self.max_depth,
                    self.chain_with(agent)
                ),
            ));
        }
        let name: Arc<str> = Arc::from(agent);
        let names = insert(self.top.as_ref().map(|t| &t.names), hash, &name, 0);
        let frame = Frame { agent: name, depth: self.depth() + 1, parent: self.top.clone(), names };
        Ok(CallStack { top: Some(Arc::new(frame)), max_depth: self.max_depth })
    }

    /// The stack as it was before the top agent was entered (an empty stack
    /// stays empty).
    pub fn parent(&self) -> CallStack {
        CallStack { top: self.top.as_ref().and_then(|t| t.parent.clone()), max_depth: self.max_depth }
    }

    /// Number of agents on the stack.
    pub fn depth(&self) -> usize {
        self.top.as_ref().map_or(0, |t| t.depth)
    }

    /// The configured maximum depth.
    pub fn max_depth(&self) -> usize {
        self.max_depth
    }

    /// The agent currently running (the top), if any.
    pub fn current(&self) -> Option<&str> {
        self.top.as_deref().map(|t| &*t.agent)
    }

    /// Whether `agent` is on the stack. O(log n).
    pub fn contains(&self, agent: &str) -> bool {
        self.top.as_ref().is_some_and(|t| contains(&t.names, hash_of(agent), agent))
    }

    /// The agents, outermost first. O(depth).
    pub fn agents(&self) -> Vec<&str> {
        let mut out = Vec::with_capacity(self.depth());
        let mut f = self.top.as_deref();
        while let Some(frame) = f {
            out.push(&*frame.agent);
            f = frame.parent.as_deref();
        }
        out.reverse();
        out
    }

    /// `"a -> b -> c"`, outermost first ("(empty)" for an empty stack).
    pub fn chain(&self) -> String {
        let agents = self.agents();
        if agents.is_empty() {
            "(empty)".to_owned()
        } else {
            agents.join(" -> ")
        }
    }

    fn chain_with(&self, next: &str) -> String {
        let mut agents = self.agents();
        agents.push(next);
        agents.join(" -> ")
    }

    /// The JSON form (see [`CallStackJson`]).
    pub fn to_json_value(&self) -> CallStackJson {
        CallStackJson {
            agents: self.agents().into_iter().map(str::to_owned).collect(),
            depth: self.depth(),
            max_depth: self.max_depth,
        }
    }

    /// Rebuilds a stack from its JSON form, checking every entry as
    /// [`CallStack::enter`] does (so a stored stack with a cycle is rejected).
    pub fn from_json(text: &str) -> Result<CallStack> {
        let j: CallStackJson = crate::json::parse("callstack", text)?;
        limits::check_items("callstack agents", j.agents.len(), MAX_CALLSTACK_DEPTH)?;
        let mut s = CallStack::new(j.max_depth)?;
        for a in &j.agents {
            s = s.enter(a)?;
        }
        Ok(s)
    }
}

fn check_name(agent: &str) -> Result<()> {
    if agent.is_empty() {
        return Err(Error::invalid_argument("agent name is empty"));
    }
    limits::check("agent name", agent.len(), MAX_AGENT_NAME_BYTES)?;
    if agent.chars().any(char::is_control) {
        return Err(Error::invalid_argument(format!("agent name {agent:?} contains a control character")));
    }
    Ok(())
}

fn hash_of(s: &str) -> u64 {
    // SipHash with fixed keys: stable within a process, and not steerable
    // into collisions the way a multiplicative hash is.
    let mut h = DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// A node of the persistent hash trie: a leaf holds every name with one hash
/// (normally one), a branch splits on the next four bits of the hash.
#[derive(Debug)]
enum Node {
    Leaf(u64, Vec<Arc<str>>),
    Branch(Box<[Option<Arc<Node>>; 16]>),
}

fn nibble(hash: u64, shift: u32) -> usize {
    ((hash >> shift) & 15) as usize
}

fn contains(mut node: &Arc<Node>, hash: u64, name: &str) -> bool {
    let mut shift = 0;
    loop {
        match &**node {
            Node::Leaf(h, names) => return *h == hash && names.iter().any(|n| &**n == name),
            Node::Branch(children) => match &children[nibble(hash, shift)] {
                Some(child) => {
                    node = child;
                    shift += 4;
                }
                None => return false,
            },
        }
    }
}

/// The trie with `name` added; `node` is shared, never changed. Recursion is
/// bounded by the hash width (at most 16 levels), not by the chain length.
fn insert(node: Option<&Arc<Node>>, hash: u64, name: &Arc<str>, shift: u32) -> Arc<Node> {
    let Some(node) = node else {
        return Arc::new(Node::Leaf(hash, vec![name.clone()]));
    };
    match &**node {
        Node::Leaf(h, names) if *h == hash || shift >= 64 => {
            let mut names = names.clone();
            names.push(name.clone());
            Arc::new(Node::Leaf(*h, names))
        }
        Node::Leaf(h, _) => {
            let mut children: [Option<Arc<Node>>; 16] = Default::default();
            children[nibble(*h, shift)] = Some(node.clone());
            let branch = Arc::new(Node::Branch(Box::new(children)));
            insert(Some(&branch), hash, name, shift)
        }
        Node::Branch(children) => {
            let mut children = children.clone();
            let i = nibble(hash, shift);
            children[i] = Some(insert(children[i].as_ref(), hash, name, shift + 4));
            Arc::new(Node::Branch(children))
        }
    }
}

#[cfg(test)]
mod tests;
