//! Fits for a model registered from its files (issue 50): the report's
//! totals are the model's own prompt count (its chat template rendered and
//! tokenized, [`PromptModel`]), and the fit tightens its budget until the
//! rendered prompt is within the limit.
//!
//! Compaction decides per message with the accountant (the model's
//! tokenizer and the framing measured from its template); those figures are
//! close, not exact, as a template may render a message differently by its
//! position. So every fit and turn for such a model counts the request it
//! returns with the template ([`Rendered::report`]), and [`tighten`] runs
//! the fit again with a smaller budget when that count is over: one loop
//! that `fit`, `fit_value` and the synchronous turn share, whatever the
//! binding.

use std::sync::Arc;

use super::FitOptions;
use super::FitReport;
use crate::chat::{Conversation, Format};
use crate::models::PromptModel;
use crate::{Error, ErrorKind, ModelRegistry, Result};

/// How many fits a tightening may run before it reports the prompt still
/// over (each pass takes off what the rendered count exceeded).
pub const MAX_FIT_PASSES: usize = 8;

/// A fit's model prompt counter and its count of the input.
#[derive(Debug, Clone)]
pub(crate) struct Rendered {
    model: Arc<dyn PromptModel>,
    before: usize,
}

impl Rendered {
    /// The prompt counter registered for `info`'s entry, with its count of
    /// `c` (the input); `None` for a model without one. A conversation
    /// that is not OpenAI Chat is refused by name: a chat template renders
    /// OpenAI Chat messages.
    pub(crate) fn for_input(
        registry: &ModelRegistry,
        info: &crate::ModelInfo,
        c: &Conversation,
    ) -> Result<Option<Rendered>> {
        let Some(model) = registry.prompt_model(info) else { return Ok(None) };
        if c.format != Format::OpenAi {
            return Err(Error::new(
                ErrorKind::InvalidArgument,
                format!(
                    "model '{}' is counted with its chat template, which renders OpenAI Chat messages; this \
                     conversation is {} (convert it first)",
                    crate::text::clip(&info.model),
                    c.format.as_str()
                ),
            ));
        }
        let before = model.count_request(&c.to_value())?;
        Ok(Some(Rendered { model, before }))
    }

    /// The order of roles the model's template enforces.
    pub(crate) fn turn_order(&self) -> crate::models::TurnOrder {
        self.model.turn_order()
    }

    /// `report` with the template's totals: `tokens_before` the input's
    /// count, `tokens_after` the fitted request's, `exact` as the model
    /// says (true unless its server renders with a template of its own), and
    /// `insufficient` also when the fitted request renders over the limit.
    pub(crate) fn report(&self, report: &mut FitReport, fitted: &Conversation) -> Result<()> {
        let after = self.model.count_request(&fitted.to_value())?;
        report.tokens_before = self.before;
        report.tokens_after = after;
        report.exact = self.model.exact();
        report.insufficient |= after > report.limit_tokens;
        report.within_target &= after <= report.target_tokens;
        Ok(())
    }
}

/// Whether `options.model` resolves in `registry` to an entry with a
/// prompt counter (an unresolvable model is left to the fit to refuse).
pub(crate) fn has_prompt_model(registry: &ModelRegistry, options: &FitOptions) -> bool {
    let custom = crate::CustomModel {
        encoding: options.encoding,
        context_window: options.context_window,
        max_output_tokens: options.max_output_tokens,
    };
    registry.resolve(&options.model, &custom).is_ok_and(|info| registry.prompt_model(&info).is_some())
}

/// Runs `fit` once, or, for a model with a prompt counter, until its
/// rendered request is within the first pass's limit: each pass over takes
/// the excess off `max_tokens` (at least twice the last step when a pass is
/// still over; up to [`MAX_FIT_PASSES`], then `insufficient`). The report
/// keeps the first pass's `max_tokens` and `limit_tokens`: the budget the
/// host asked for.
pub(crate) fn tighten<T>(
    registry: &ModelRegistry,
    options: &FitOptions,
    mut fit: impl FnMut(&FitOptions) -> Result<(T, FitReport)>,
) -> Result<(T, FitReport)> {
    if !has_prompt_model(registry, options) {
        return fit(options);
    }
    let mut opts = options.clone();
    let (mut base_max, mut limit, mut shrink, mut step) = (0, 0, 0, 0);
    for pass in 0..MAX_FIT_PASSES {
        let (fitted, mut report) = fit(&opts)?;
        if pass == 0 {
            // The first pass fixes the budget and the reply's reserve.
            (base_max, limit) = (report.max_tokens, report.limit_tokens);
            opts.reserve_output = Some(report.reserved_output);
        }
        let over = report.tokens_after.saturating_sub(limit);
        if over == 0 || pass + 1 == MAX_FIT_PASSES || shrink + over >= limit {
            report.max_tokens = base_max;
            report.limit_tokens = limit;
            report.insufficient = over > 0;
            return Ok((fitted, report));
        }
        step = over.max(step * 2);
        shrink = (shrink + step).min(limit.saturating_sub(1));
        opts.max_tokens = Some(base_max - shrink);
    }
    unreachable!("the last pass returns")
}
