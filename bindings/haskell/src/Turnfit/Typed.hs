{-# LANGUAGE OverloadedStrings #-}

-- | Typed results beside the aeson 'Value' API of "Turnfit", and tool spans
-- with an enforced deadline.
--
-- The records decode the JSON the library returns (docs/formats.md: the
-- pre-flight report, the fit report, an error classification); they hold the
-- figures a Haskell agent branches on and nothing the 'Value' API does not
-- already give. Decoding is strict about the fields it names and ignores the
-- rest, so a field added to a report later does not break them.
--
-- 'withToolSpan' is what a tracer cannot do from C: the tracer detects
-- deadlines ('tracerOverdue'), while this runs the action under
-- "System.Timeout" so the deadline is enforced, and records the span.
module Turnfit.Typed
  ( -- * Pre-flight
    Preflight (..), Verdict (..), windowPreflightTyped
    -- * Fit
  , FitOptions (..), FitStrategy (..), SummaryRole (..), fitOptions, fitOptionsJson, fitWith
  , FitReport (..), fitTyped
    -- * Error classification
  , Classification (..), classifyErrorTyped
  , decodeTyped
    -- * Tool spans with a deadline
  , ToolResult (..), defaultToolTimeoutUs, withToolSpan
  ) where

import Control.Exception (SomeAsyncException, SomeException, fromException, throwIO, try)
import Data.Aeson (FromJSON (..), ToJSON (..), Value (..), withObject, withText, (.:), (.:?), (.!=))
import qualified Data.Aeson as A
import qualified Data.Aeson.Key as K
import qualified Data.Aeson.KeyMap as KM
import Data.Maybe (catMaybes)
import Data.Text (Text)
import qualified Data.Text as T
import Data.Word (Word32, Word64)
import System.Timeout (timeout)

import Turnfit

-- | Decodes a 'Value' the library returned; a mismatch is a 'TurnfitError'
-- with status INVALID_JSON naming the record, never a crash.
decodeTyped :: FromJSON a => String -> Value -> IO a
decodeTyped what v = case A.fromJSON v of
  A.Success a -> pure a
  A.Error e -> throwIO (TurnfitError statusInvalidJson (T.pack ("decoding " ++ what ++ ": " ++ e)))

-- ---------------------------------------------------------------------------
-- Pre-flight

data Verdict = Fits | ShouldCompact | Overflow deriving (Eq, Show)

instance FromJSON Verdict where
  parseJSON = withText "verdict" $ \t -> case t of
    "fits" -> pure Fits
    "should_compact" -> pure ShouldCompact
    "overflow" -> pure Overflow
    _ -> fail ("unknown verdict " ++ T.unpack t)

-- | The pre-flight report (docs/formats.md, "Pre-flight").
data Preflight = Preflight
  { preModel :: Text
  , preExact :: Bool
  , preSystem :: Int
  , preTools :: Int
  , preHistory :: Int
  , preNewInput :: Int
  , prePromptTokens :: Int
  , preCalibratedPromptTokens :: Int
  , preCalibration :: Double
  , preReservedOutput :: Int
  , preLimit :: Int
  , preRemaining :: Int
  , preUtilization :: Double
  , preTriggerTokens :: Int
  , preTargetTokens :: Int
  , preVerdict :: Verdict
  } deriving (Eq, Show)

instance FromJSON Preflight where
  parseJSON = withObject "preflight" $ \o -> Preflight
    <$> o .: "model" <*> o .: "exact" <*> o .: "system" <*> o .: "tools" <*> o .: "history"
    <*> o .: "new_input" <*> o .: "prompt_tokens" <*> o .: "calibrated_prompt_tokens"
    <*> o .: "calibration" <*> o .: "reserved_output" <*> o .: "limit" <*> o .: "remaining"
    <*> o .: "utilization" <*> o .: "trigger_tokens" <*> o .: "target_tokens" <*> o .: "verdict"

windowPreflightTyped :: Window -> Maybe Value -> IO Preflight
windowPreflightTyped w new = windowPreflight w new >>= decodeTyped "preflight"

-- ---------------------------------------------------------------------------
-- Fit

-- | The compaction strategy (docs/formats.md, "Compaction policy").
data FitStrategy = Recency | Relevance | Hybrid | Summarize deriving (Eq, Show, Enum, Bounded)

-- | The role of an inserted summary: a user message, or a system message
-- where the format has them (OpenAI; Anthropic summaries join a user message).
data SummaryRole = SummaryUser | SummarySystem deriving (Eq, Show, Enum, Bounded)

-- | Fit options as a record (docs/formats.md, "Fit options" and its
-- @policy@), rendered to the options JSON 'fit' takes. Every field but the
-- model is optional: 'Nothing' (or an empty list) leaves the field out, so
-- the library's own default applies and is written down in one place (the
-- core), not copied here. Start from 'fitOptions' and set what you need:
--
-- > (fitOptions "gpt-4o") { foMaxTokens = Just 14000, foTriggerRatio = Just 0.8
-- >                       , foTargetRatio = Just 0.5, foToolOutputMaxBytes = Just 10000 }
--
-- Values are checked by the library, not here: a ratio outside 0..1 or a
-- byte cap too small for the truncation marker comes back from 'fitWith'
-- as a 'TurnfitError' with INVALID_ARGUMENT.
data FitOptions = FitOptions
  { foModel :: Text
  , foMaxTokens :: Maybe Int
    -- ^ Budget for prompt plus reserved output [the model's context window].
  , foReserveOutput :: Maybe Int
  , foFormat :: Maybe Text
    -- ^ "openai", "anthropic", "responses" ...; detected when absent.
  , foTargetRatio :: Maybe Double
    -- ^ Compact down to this fraction of the budget once the trigger fires.
  , foTriggerRatio :: Maybe Double
    -- ^ Compact once prompt plus reserved output reach this fraction [0.8].
  , foStrategy :: Maybe FitStrategy
  , foTargetTokens :: Maybe Int
    -- ^ Compact down to this many prompt tokens (wins over the ratio).
  , foKeepFirst :: Maybe Int
  , foKeepLastRounds :: Maybe Int
  , foKeepLastTurns :: Maybe Int
  , foKeepLastMessages :: Maybe Int
  , foPinned :: [Int]
  , foMask :: Maybe Bool
    -- ^ Observation masking of older tool results [on].
  , foMaskKeepLast :: Maybe Int
  , foToolOutputMax :: Maybe Int
    -- ^ Cut tool outputs longer than this many tokens.
  , foToolOutputMaxBytes :: Maybe Int
    -- ^ Cut tool outputs longer than this many bytes first (10000: a 10 KB cap).
  , foSummaryMaxTokens :: Maybe Int
  , foSummaryRole :: Maybe SummaryRole
  , foSummaryLabel :: Maybe Text
  } deriving (Eq, Show)

-- | Options naming only the model: every other field is the library's default.
fitOptions :: Text -> FitOptions
fitOptions m = FitOptions
  { foModel = m, foMaxTokens = Nothing, foReserveOutput = Nothing, foFormat = Nothing
  , foTargetRatio = Nothing, foTriggerRatio = Nothing, foStrategy = Nothing, foTargetTokens = Nothing
  , foKeepFirst = Nothing, foKeepLastRounds = Nothing, foKeepLastTurns = Nothing, foKeepLastMessages = Nothing
  , foPinned = [], foMask = Nothing, foMaskKeepLast = Nothing, foToolOutputMax = Nothing
  , foToolOutputMaxBytes = Nothing, foSummaryMaxTokens = Nothing, foSummaryRole = Nothing, foSummaryLabel = Nothing
  }

instance ToJSON FitStrategy where
  toJSON s = String $ case s of
    Recency -> "recency"
    Relevance -> "relevance"
    Hybrid -> "hybrid"
    Summarize -> "summarize"

instance ToJSON SummaryRole where
  toJSON r = String $ case r of
    SummaryUser -> "user"
    SummarySystem -> "system"

instance ToJSON FitOptions where
  toJSON = fitOptionsJson

-- | The options JSON: top-level budget fields, and a @policy@ object only
-- when a policy field is set (absent fields are left out, not null).
fitOptionsJson :: FitOptions -> Value
fitOptionsJson o = A.object (("model" A..= foModel o) : top ++ [("policy", policy) | not (null pol)])
  where
    field :: ToJSON v => Text -> Maybe v -> Maybe (K.Key, Value)
    field k = fmap (\v -> (K.fromText k, toJSON v))
    top = catMaybes
      [ field "max_tokens" (foMaxTokens o), field "reserve_output" (foReserveOutput o)
      , field "format" (foFormat o), field "target_ratio" (foTargetRatio o)
      , field "trigger_ratio" (foTriggerRatio o) ]
    maskFields = catMaybes [field "enabled" (foMask o), field "keep_last" (foMaskKeepLast o)]
    pol = catMaybes
      [ field "strategy" (foStrategy o), field "target_tokens" (foTargetTokens o)
      , field "keep_first" (foKeepFirst o), field "keep_last_rounds" (foKeepLastRounds o)
      , field "keep_last_turns" (foKeepLastTurns o), field "keep_last_messages" (foKeepLastMessages o)
      , if null (foPinned o) then Nothing else field "pinned" (Just (foPinned o))
      , if null maskFields then Nothing else Just ("mask", A.object maskFields)
      , field "tool_output_max" (foToolOutputMax o), field "tool_output_max_bytes" (foToolOutputMaxBytes o)
      , field "summary_max_tokens" (foSummaryMaxTokens o), field "summary_role" (foSummaryRole o)
      , field "summary_label" (foSummaryLabel o) ]
    policy = A.object pol

-- | 'fit' with typed options and the report decoded.
fitWith :: Value -> FitOptions -> IO (Value, FitReport)
fitWith conv o = fitTyped conv (fitOptionsJson o)

-- | The fit report's figures (docs/formats.md, "Fit report"); the manifest
-- stays a list of 'Value's (one object per change, several shapes).
data FitReport = FitReport
  { fitModel :: Text
  , fitExact :: Bool
  , fitStrategy :: Text
  , fitMaxTokens :: Int
  , fitReservedOutput :: Int
  , fitLimitTokens :: Int
  , fitTokensBefore :: Int
  , fitTokensAfter :: Int
  , fitMessagesBefore :: Int
  , fitMessagesAfter :: Int
  , fitInsufficient :: Bool
  , fitTargetTokens :: Int
    -- ^ What compaction aimed at (the target when the trigger fired, else the limit).
  , fitWithinTarget :: Bool
  , fitShortfall :: Maybe Value
    -- ^ What was given up to stay within the limit, and why (a target is a
    -- goal): @{"reason", "detail"}@; 'Nothing' when nothing was.
  , fitChanges :: [Value]
  , fitProtected :: [Value]
  } deriving (Eq, Show)

instance FromJSON FitReport where
  parseJSON = withObject "fit report" $ \o -> FitReport
    <$> o .: "model" <*> o .: "exact" <*> o .: "strategy" <*> o .: "max_tokens"
    <*> o .: "reserved_output" <*> o .: "limit_tokens" <*> o .: "tokens_before" <*> o .: "tokens_after"
    <*> o .: "messages_before" <*> o .: "messages_after" <*> o .: "insufficient"
    <*> o .: "target_tokens" <*> o .: "within_target" <*> o .:? "shortfall"
    <*> o .:? "changes" .!= [] <*> o .:? "protected" .!= []

-- | 'fit' with the report decoded; the conversation stays a 'Value' (it is
-- in the caller's own format).
fitTyped :: Value -> Value -> IO (Value, FitReport)
fitTyped conv opts = do
  (c, r) <- fit conv opts
  rep <- decodeTyped "fit report" r
  pure (c, rep)

-- ---------------------------------------------------------------------------
-- Classification

-- | A classified provider error (docs/formats.md, "Error classification").
-- Category, severity, action and delay source keep the library's snake_case
-- names ("rate_limited", "repair_history", ...), so a new category is not a
-- decoding failure.
data Classification = Classification
  { clsCategory :: Text
  , clsSeverity :: Text
  , clsRetryable :: Bool
  , clsAction :: Text
  , clsRetryAfterMs :: Maybe Word64
  , clsDelaySource :: Maybe Text
  , clsProvider :: Text
  , clsStatus :: Int
  , clsCode :: Maybe Text
  , clsMessage :: Maybe Text
  , clsToolCallIds :: [Text]
  , clsAgentId :: Maybe Text
    -- ^ The error context's agent, as given to 'classifyErrorIn'.
  , clsWorkflowId :: Maybe Text
  , clsMetadata :: Maybe Value
  } deriving (Eq, Show)

instance FromJSON Classification where
  parseJSON = withObject "classification" $ \o -> Classification
    <$> o .: "category" <*> o .: "severity" <*> o .: "retryable" <*> o .: "action"
    <*> o .:? "retry_after_ms" <*> o .:? "delay_source" <*> o .: "provider" <*> o .: "status"
    <*> o .:? "code" <*> o .:? "message" <*> o .:? "tool_call_ids" .!= []
    <*> o .:? "agent_id" <*> o .:? "workflow_id" <*> o .:? "metadata"

classifyErrorTyped :: Text -> Word32 -> Maybe Text -> Maybe Value -> IO Classification
classifyErrorTyped p st body headers = classifyError p st body headers >>= decodeTyped "classification"

-- ---------------------------------------------------------------------------
-- Tool spans

-- | How a tool call under 'withToolSpan' ended.
data ToolResult a
  = ToolOk a
    -- ^ The action returned within its deadline (span ended @success@).
  | ToolTimedOut Int
    -- ^ The deadline (µs) passed; the action was interrupted (span ended @timeout@).
  | ToolException SomeException
    -- ^ The action threw a synchronous exception (span ended @failed@ with its text).
  deriving (Show)

-- | The default tool deadline, 10 s, as the tracer's default.
defaultToolTimeoutUs :: Int
defaultToolTimeoutUs = 10000000

-- | Runs a tool action under 'timeout' with a tracer span around it: the
-- span is started with @info@ (an object; @timeout_ms@ is set from the
-- deadline unless given) and ended as success, timeout or failed. An
-- asynchronous exception (the calling thread killed) ends the span as
-- @cancelled@ and is re-thrown. A deadline of 0 or less is refused by the
-- tracer (INVALID_ARGUMENT) before the action runs.
withToolSpan :: Tracer -> Text -> Maybe Value -> Int -> IO a -> IO (ToolResult a)
withToolSpan t tool info deadlineUs action = do
  let ms = (max 0 deadlineUs + 999) `div` 1000
      withDeadline = case info of
        Just (Object o) | not (KM.member "timeout_ms" o) -> Object (KM.insert "timeout_ms" (A.toJSON ms) o)
        Just v -> v
        Nothing -> A.object ["timeout_ms" A..= ms]
  start <- clockNowUs
  sid <- tracerStart t tool (Just withDeadline) 0 start
  r <- try (timeout deadlineUs action)
  end <- clockNowUs
  case r of
    Right (Just a) -> tracerEnd t sid SpanSuccess 0 Nothing end >> pure (ToolOk a)
    Right Nothing -> do
      tracerEnd t sid SpanTimeout 0 (Just (T.pack ("deadline of " ++ show ms ++ " ms exceeded"))) end
      pure (ToolTimedOut deadlineUs)
    Left e -> case fromException e :: Maybe SomeAsyncException of
      Just _ -> tracerEnd t sid SpanCancelled 0 Nothing end >> throwIO e
      Nothing -> do
        tracerEnd t sid SpanFailed 0 (Just (T.pack (show e))) end
        pure (ToolException e)
