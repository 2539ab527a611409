{-# LANGUAGE OverloadedStrings #-}

-- | Typed records for the library's structured results that "Turnfit"
-- returns as aeson 'Value's: a compaction's outcome, a summary request (the
-- window's and a turn's), a skill listing and a tracer export (with its
-- span records). docs/formats.md describes each JSON shape.
--
-- The 'Value' functions stay as they are (removing them would break code
-- written against them, and they carry every field, including ones added
-- later); the @...Typed@ functions here call them and decode. Decoding is
-- strict about the fields a record names and ignores the rest, so a field
-- the library adds later does not break a program; a result that does not
-- decode is a 'TurnfitError' with INVALID_JSON naming the record
-- ('Turnfit.Typed.decodeTyped'), never a crash.
module Turnfit.Records
  ( -- * Compaction
    CompactOutcome (..), CompactReport (..), SummaryRequest (..), windowCompactTyped
    -- * Turn summarizer calls
  , SummarizerCall (..), typedSummarizer
    -- * Skills
  , SkillListing (..), SkillEntry (..), SkillHeader (..), SkillDiagnostic (..), IgnoredEntry (..)
  , skillsListTyped
    -- * Tracer
  , TraceExport (..), ToolMetrics (..), Durations (..), OpenSpanView (..), SpanRecord (..), SpanOutcomeName
  , tracerExportTyped
  ) where

import Data.Aeson (FromJSON (..), Value (..), withObject, (.!=), (.:), (.:?))
import Data.Map.Strict (Map)
import Data.Text (Text)
import Data.Word (Word64)

import Turnfit
import Turnfit.Typed (decodeTyped)

-- ---------------------------------------------------------------------------
-- Compaction

-- | What 'Turnfit.windowCompact' returns: done, or a summary the host's
-- model must write first ('Turnfit.windowApplySummary' with 'srId').
data CompactOutcome = CompactDone CompactReport | CompactNeedsSummary SummaryRequest
  deriving (Eq, Show)

data CompactReport = CompactReport
  { crTokensBefore :: Int
  , crTokensAfter :: Int
  , crTargetTokens :: Int
  , crLimitTokens :: Int
  , crWithinTarget :: Bool
  , crInsufficient :: Bool
  , crChanges :: [Value] -- ^ manifest entries (docs/formats.md, "Manifest entries")
  , crProtected :: [Value]
  } deriving (Eq, Show)

-- | A window's summary request: send 'srPrompt' to a model, answer with
-- 'Turnfit.windowApplySummary' and 'srId'.
data SummaryRequest = SummaryRequest
  { srId :: Text
  , srMessages :: [Int]
  , srSpanTokens :: Int
  , srPrompt :: Text
  , srPromptTokens :: Int
  , srMaxSummaryTokens :: Int
  } deriving (Eq, Show)

instance FromJSON CompactReport where
  parseJSON = withObject "compact report" $ \o -> CompactReport
    <$> o .: "tokens_before" <*> o .: "tokens_after" <*> o .: "target_tokens" <*> o .: "limit_tokens"
    <*> o .: "within_target" <*> o .: "insufficient" <*> o .:? "changes" .!= [] <*> o .:? "protected" .!= []

instance FromJSON SummaryRequest where
  parseJSON = withObject "summary request" $ \o -> SummaryRequest
    <$> o .: "id" <*> o .: "messages" <*> o .: "span_tokens" <*> o .: "prompt"
    <*> o .: "prompt_tokens" <*> o .: "max_summary_tokens"

instance FromJSON CompactOutcome where
  parseJSON = withObject "compact outcome" $ \o -> do
    st <- o .: "status"
    case st :: Text of
      "done" -> CompactDone <$> o .: "report"
      "needs_summary" -> CompactNeedsSummary <$> o .: "request"
      _ -> fail ("unknown compact status " ++ show st)

-- | 'Turnfit.windowCompact', decoded.
windowCompactTyped :: Window -> Maybe Value -> IO CompactOutcome
windowCompactTyped w policy = windowCompact w policy >>= decodeTyped "compact outcome"

-- ---------------------------------------------------------------------------
-- Turn summarizer calls

-- | A turn's request to the host's summarizer (docs/formats.md, "Turns").
data SummarizerCall = SummarizerCall
  { scId :: Text
  , scPiece :: Int
  , scPieces :: Int
  , scModel :: Maybe Text
  , scPrompt :: Text
  , scPromptTokens :: Int
  , scMaxPromptTokens :: Int
  , scMaxSummaryTokens :: Int
  , scMessages :: [Int]
  , scFoldsPrevious :: Bool
  , scTimeoutMs :: Maybe Int
  } deriving (Eq, Show)

instance FromJSON SummarizerCall where
  parseJSON = withObject "summarizer call" $ \o -> SummarizerCall
    <$> o .: "id" <*> o .: "piece" <*> o .: "pieces" <*> o .:? "model" <*> o .: "prompt"
    <*> o .: "prompt_tokens" <*> o .: "max_prompt_tokens" <*> o .: "max_summary_tokens"
    <*> o .:? "messages" .!= [] <*> o .:? "folds_previous" .!= False <*> o .:? "timeout_ms"

-- | A typed summarizer as the 'Turnfit.Summarizer' 'Turnfit.fitTurn' and
-- 'Turnfit.windowFitTurn' take. A request that does not decode throws, which
-- the turn treats as a failed summary (the digest stands in, the report
-- says @error@), like any exception from the summarizer.
typedSummarizer :: (SummarizerCall -> IO Text) -> Summarizer
typedSummarizer f v = decodeTyped "summarizer call" v >>= f

-- ---------------------------------------------------------------------------
-- Skills

-- | 'Turnfit.skillsList' (docs/formats.md, "Skill listing").
data SkillListing = SkillListing
  { slEncoding :: Text
  , slSkills :: [SkillEntry]
  , slIgnored :: [IgnoredEntry]
  , slValid :: Int
  , slInvalid :: Int
  } deriving (Eq, Show)

data SkillEntry = SkillEntry
  { seName :: Text
  , seLayout :: Text -- ^ @folder@ or @flat@
  , sePath :: Text
  , seValid :: Bool
  , seHeader :: Maybe SkillHeader -- ^ Nothing when the file could not be read
  , seHeaderTokens :: Int
  , seBodyBytes :: Int
  , seBodyTokens :: Maybe Int -- ^ Nothing until the body was loaded
  , seDiagnostics :: [SkillDiagnostic]
  } deriving (Eq, Show)

data SkillHeader = SkillHeader
  { shName :: Maybe Text
  , shDescription :: Maybe Text
  , shLabel :: Maybe Text
  , shCategory :: Maybe Text
  , shLicense :: Maybe Text
  , shCompatibility :: Maybe Text
  , shAllowedTools :: [Text]
  , shMetadata :: Map Text Value
  } deriving (Eq, Show)

data SkillDiagnostic = SkillDiagnostic
  { sdSeverity :: Text -- ^ @error@ or @warning@
  , sdCode :: Text
  , sdMessage :: Text
  } deriving (Eq, Show)

data IgnoredEntry = IgnoredEntry {igPath :: Text, igReason :: Text} deriving (Eq, Show)

instance FromJSON SkillListing where
  parseJSON = withObject "skill listing" $ \o -> SkillListing
    <$> o .: "encoding" <*> o .: "skills" <*> o .:? "ignored" .!= [] <*> o .: "valid" <*> o .: "invalid"

instance FromJSON SkillEntry where
  parseJSON = withObject "skill" $ \o -> SkillEntry
    <$> o .: "name" <*> o .: "layout" <*> o .: "path" <*> o .: "valid" <*> o .:? "header"
    <*> o .: "header_tokens" <*> o .: "body_bytes" <*> o .:? "body_tokens" <*> o .:? "diagnostics" .!= []

instance FromJSON SkillHeader where
  parseJSON = withObject "skill header" $ \o -> SkillHeader
    <$> o .:? "name" <*> o .:? "description" <*> o .:? "label" <*> o .:? "category" <*> o .:? "license"
    <*> o .:? "compatibility" <*> o .:? "allowed_tools" .!= [] <*> o .:? "metadata" .!= mempty

instance FromJSON SkillDiagnostic where
  parseJSON = withObject "skill diagnostic" $ \o -> SkillDiagnostic <$> o .: "severity" <*> o .: "code" <*> o .: "message"

instance FromJSON IgnoredEntry where
  parseJSON = withObject "ignored entry" $ \o -> IgnoredEntry <$> o .: "path" <*> o .: "reason"

-- | 'Turnfit.skillsList', decoded.
skillsListTyped :: Skills -> IO SkillListing
skillsListTyped s = skillsList s >>= decodeTyped "skill listing"

-- ---------------------------------------------------------------------------
-- Tracer

-- | @success@, @failed@, @timeout@ or @cancelled@, as the JSON spells it.
type SpanOutcomeName = Text

-- | 'Turnfit.tracerExport' (docs/formats.md, "Tracer"), times in µs.
data TraceExport = TraceExport
  { teSpansStarted :: Word64
  , teSpansEnded :: Word64
  , teCollapsed :: Word64
  , teEvicted :: Word64
  , teRingSize :: Int
  , teTools :: [ToolMetrics]
  , teErrorCategories :: Map Text Word64
  , teOpen :: [OpenSpanView]
  , teRecent :: [SpanRecord]
  } deriving (Eq, Show)

data ToolMetrics = ToolMetrics
  { tmTool :: Text
  , tmCount :: Word64
  , tmSuccesses :: Word64
  , tmErrors :: Word64
  , tmTimeouts :: Word64
  , tmCancelled :: Word64
  , tmInFlight :: Word64
  , tmInputBytes :: Word64
  , tmOutputBytes :: Word64
  , tmInputTokens :: Word64
  , tmOutputTokens :: Word64
  , tmErrorCategories :: Map Text Word64
  , tmDurationUs :: Maybe Durations -- ^ Nothing until a span ended
  } deriving (Eq, Show)

data Durations = Durations
  { duMin :: Word64, duMax :: Word64, duMean :: Double, duP50 :: Word64, duP95 :: Word64, duP99 :: Word64 }
  deriving (Eq, Show)

-- | An open span (the export's @open@, 'Turnfit.tracerOverdue''s entries).
data OpenSpanView = OpenSpanView
  { osSpanId :: Word64
  , osTool :: Text
  , osAgentId :: Maybe Text
  , osWorkflowId :: Maybe Text
  , osToolCallId :: Maybe Text
  , osStartedUs :: Word64
  , osElapsedUs :: Word64
  , osTimeoutMs :: Word64
  } deriving (Eq, Show)

-- | A finished span's record (the export's @recent@, and the payload of a
-- @span_finished@ event).
data SpanRecord = SpanRecord
  { spSpanId :: Word64
  , spTool :: Text
  , spAgentId :: Maybe Text
  , spWorkflowId :: Maybe Text
  , spToolCallId :: Maybe Text
  , spInputHash :: Maybe Text
  , spInputExcerpt :: Maybe Text
  , spOutputExcerpt :: Maybe Text
  , spOutcome :: SpanOutcomeName
  , spError :: Maybe Text
  , spErrorCategory :: Maybe Text
  , spStartedUs :: Word64
  , spDurationUs :: Word64
  , spInputBytes :: Word64
  , spOutputBytes :: Word64
  , spInputTokens :: Maybe Word64
  , spOutputTokens :: Maybe Word64
  , spMetadata :: Map Text Value
  , spCount :: Word64
  , spLastSpanId :: Word64
  , spLastEndedUs :: Word64
  } deriving (Eq, Show)

instance FromJSON TraceExport where
  parseJSON = withObject "trace export" $ \o -> TraceExport
    <$> o .: "spans_started" <*> o .: "spans_ended" <*> o .: "collapsed" <*> o .: "evicted" <*> o .: "ring_size"
    <*> o .: "tools" <*> o .:? "error_categories" .!= mempty <*> o .:? "open" .!= [] <*> o .:? "recent" .!= []

instance FromJSON ToolMetrics where
  parseJSON = withObject "tool metrics" $ \o -> ToolMetrics
    <$> o .: "tool" <*> o .: "count" <*> o .: "successes" <*> o .: "errors" <*> o .: "timeouts"
    <*> o .: "cancelled" <*> o .: "in_flight" <*> o .: "input_bytes" <*> o .: "output_bytes"
    <*> o .:? "input_tokens" .!= 0 <*> o .:? "output_tokens" .!= 0 <*> o .:? "error_categories" .!= mempty
    <*> o .:? "duration_us"

instance FromJSON Durations where
  parseJSON = withObject "durations" $ \o -> Durations
    <$> o .: "min" <*> o .: "max" <*> o .: "mean" <*> o .: "p50" <*> o .: "p95" <*> o .: "p99"

instance FromJSON OpenSpanView where
  parseJSON = withObject "open span" $ \o -> OpenSpanView
    <$> o .: "span_id" <*> o .: "tool" <*> o .:? "agent_id" <*> o .:? "workflow_id" <*> o .:? "tool_call_id"
    <*> o .: "started_us" <*> o .: "elapsed_us" <*> o .: "timeout_ms"

instance FromJSON SpanRecord where
  parseJSON = withObject "span record" $ \o -> SpanRecord
    <$> o .: "span_id" <*> o .: "tool" <*> o .:? "agent_id" <*> o .:? "workflow_id" <*> o .:? "tool_call_id"
    <*> o .:? "input_hash" <*> o .:? "input_excerpt" <*> o .:? "output_excerpt" <*> o .: "outcome"
    <*> o .:? "error" <*> o .:? "error_category" <*> o .: "started_us" <*> o .: "duration_us"
    <*> o .: "input_bytes" <*> o .: "output_bytes" <*> o .:? "input_tokens" <*> o .:? "output_tokens"
    <*> o .:? "metadata" .!= mempty <*> o .: "count" <*> o .: "last_span_id" <*> o .: "last_ended_us"

-- | 'Turnfit.tracerExport', decoded.
tracerExportTyped :: Tracer -> Word64 -> IO TraceExport
tracerExportTyped t now = tracerExport t now >>= decodeTyped "trace export"
