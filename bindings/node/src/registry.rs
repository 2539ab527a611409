//! The binding's model registry: one per process (like Python's), the
//! built-in table plus the profiles `registerModel` adds. Every call that
//! takes a model name looks it up here, so a registered model works
//! wherever a built-in one does.
//!
//! A profile may come with the host's own counter, a JS function. The core
//! calls it ([`turnfit::models::HostCounter`]) for every text it counts for
//! that model, on the thread that asked for the count, and checks what it
//! returns (a failure, re-entry, or a count above the bytes plus 64 are
//! errors naming the model). A JS function may run only on the thread of
//! the JS environment it belongs to, so this conversion calls it there and
//! refuses anywhere else: on the libuv pool (`fitAsync`, `compactAsync`)
//! and in a Worker other than the one that registered it. Those calls fail
//! with the core's "failed: ..." error instead of waiting for the JS thread,
//! because the JS thread may itself be waiting on the lock the pool thread
//! holds (a synchronous call on the same window), which would never end.

use std::sync::LazyLock;
use std::thread::ThreadId;

use napi::bindgen_prelude::{Either, FunctionRef, Unknown};
use napi::{Env, ValueType};
use napi_derive::napi;

use turnfit::ModelRegistry;

use crate::error::{guard, json};

static REGISTRY: LazyLock<ModelRegistry> = LazyLock::new(ModelRegistry::builtin);

/// The registry every Node call looks models up in.
pub(crate) fn registry() -> &'static ModelRegistry {
    &REGISTRY
}

/// What a counter returns: a number, or anything else (refused, by type).
type CountFn = FunctionRef<String, Either<f64, Unknown<'static>>>;

/// A JS counting function and where it may run.
struct JsCounter {
    f: CountFn,
    /// The thread of the JS environment that registered it.
    thread: ThreadId,
    /// That environment (`napi_env`), as an address: used only on `thread`,
    /// where it stays valid for as long as the thread runs JS.
    env: usize,
}

const OFF_THREAD: &str = "it is a JavaScript function, which runs only on the JavaScript thread that registered it; \
                          async calls (fitAsync, compactAsync) run on the thread pool and a Worker on its own \
                          thread: count with the synchronous call on that thread, or register the model in that Worker";

/// A JS number as the text JS would print for it (`NaN`, `Infinity`).
fn js_number(n: f64) -> String {
    if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        n.to_string()
    }
}

fn a_type(t: ValueType) -> &'static str {
    match t {
        ValueType::Undefined => "undefined",
        ValueType::Null => "null",
        ValueType::Boolean => "a boolean",
        ValueType::String => "a string",
        ValueType::Symbol => "a symbol",
        ValueType::Object => "an object",
        ValueType::Function => "a function",
        ValueType::BigInt => "a bigint",
        _ => "a value of another type",
    }
}

impl JsCounter {
    /// Calls the function with `text`; a thrown exception is its string
    /// (`Error: message`), a result that is not a non-negative integer
    /// number is refused. The core adds the model's name and checks the
    /// count against the text's bytes.
    fn count(&self, text: &str) -> Result<usize, String> {
        if std::thread::current().id() != self.thread {
            return Err(OFF_THREAD.to_owned());
        }
        let env = Env::from_raw(self.env as napi::sys::napi_env);
        // A scope per call: a fit may count thousands of texts inside one
        // native call, and each call's handles are released here.
        let r = env.run_in_scope(|| {
            let out = self.f.borrow_back(&env)?.call(text.to_owned());
            Ok(match out {
                Err(e) if e.reason.is_empty() => Err(format!("it threw ({})", e.status)),
                Err(e) => Err(e.reason.clone()),
                Ok(Either::A(n)) if n.is_finite() && n >= 0.0 && n.fract() == 0.0 => {
                    Ok(if n >= usize::MAX as f64 { usize::MAX } else { n as usize })
                }
                Ok(Either::A(n)) => Err(format!("it returned {}, not a non-negative integer", js_number(n))),
                Ok(Either::B(v)) => {
                    Err(format!("it returned {}, not a number", v.get_type().map_or("a value of unknown type", a_type)))
                }
            })
        });
        r.unwrap_or_else(|e| Err(format!("it could not be called: {}", e.reason)))
    }
}

/// `registerModel`: one profile or an array of them as JSON text (the
/// core's schema, schemas/model-profile.json); with `count`, one profile
/// and its counter. Returns how many names were registered.
#[napi]
pub fn register_model_json(
    env: Env,
    profile: String,
    #[napi(ts_arg_type = "((text: string) => number) | undefined | null")] count: Option<CountFn>,
) -> napi::Result<u32> {
    guard("registerModel", || match count {
        None => registry().register_json(&profile).map(|n| u32::try_from(n).unwrap_or(u32::MAX)),
        Some(f) => {
            let c = JsCounter { f, thread: std::thread::current().id(), env: env.raw() as usize };
            registry().register_json_with_counter(&profile, move |text: &str| c.count(text)).map(|()| 1)
        }
    })
}

/// `registerModelFiles`: a model by its files (the spec as JSON text,
/// docs/formats.md "Model files"); returns its registry entry as JSON.
#[napi]
pub fn register_model_files_json(spec: String) -> napi::Result<String> {
    guard("registerModelFiles", || json(&turnfit::template::register_model_files_json(registry(), &spec)?))
}

/// Every registry entry (built-in and registered) as JSON text.
#[napi]
pub fn list_models_json() -> napi::Result<String> {
    guard("listModels", || json(&registry().list_json()))
}
