//! `strftime_now(format)`: the local date and time formatted as Python's
//! `datetime.now().strftime(format)` (Llama 3.1 prints "Today Date: 26 Jul
//! 2024" with it). The time zone is the system's (TZ, /etc/localtime); a
//! fixed time can be given for tests and reproducible renders.

use minijinja::{Error, ErrorKind};

/// The clock a render reads: now in the local zone, or a fixed civil time.
pub(super) fn format_now(fixed: Option<&str>, format: &str) -> Result<String, Error> {
    let fail = |what: String| Error::new(ErrorKind::InvalidOperation, what);
    let result = match fixed {
        Some(text) => {
            let dt: jiff::civil::DateTime = text
                .parse()
                .map_err(|e| fail(format!("strftime_now: the fixed time {text:?} is not a civil date-time: {e}")))?;
            jiff::fmt::strtime::format(format, dt)
        }
        None => jiff::fmt::strtime::format(format, &jiff::ZonedDateTime::now()),
    };
    result.map_err(|e| fail(format!("strftime_now: cannot format with {format:?}: {e}")))
}
