{-# LANGUAGE OverloadedStrings #-}

-- | The typed handoff of the Haskell framework design (seed document 004):
-- a 'HandoffObject' record with aeson instances. 'ToJSON' writes the
-- design's camelCase JSON; 'FromJSON' reads it and the snake_case JSON the
-- core returns. Validation and rendering are the core's
-- ('Turnfit.handoffValidate', 'Turnfit.handoffRender'); this module only
-- converts.
module Turnfit.Handoff
  ( HandoffObject (..)
  , HandoffMetadata (..)
  , KeyOutput (..)
  , validateHandoffObject
  , handoffPromptText
    -- * Rendering with a format
  , HandoffFormat (..)
  , RenderHandoff (..)
  , renderHandoff
  , HandoffRendered (..)
  , ShortenedOutput (..)
  , renderHandoffObject
  , toPromptText
  ) where

import Control.Applicative ((<|>))
import Data.Aeson
import qualified Data.Aeson.KeyMap as KM
import Data.Aeson.Types (Parser, typeMismatch)
import Data.String (IsString (..))
import Data.Text (Text)
import qualified Data.Text as T

import Turnfit (TurnfitError (..), handoffRender, handoffValidate, statusInvalidJson)
import Control.Exception (throwIO)

-- | A key output: plain text, or labelled content (a file, a URL).
data KeyOutput = KeyOutputText Text | KeyOutputLabeled Text Text
  deriving (Eq, Show)

instance IsString KeyOutput where
  fromString = KeyOutputText . T.pack

instance FromJSON KeyOutput where
  parseJSON (String s) = pure (KeyOutputText s)
  parseJSON (Object o) = KeyOutputLabeled <$> o .: "label" <*> o .: "content"
  parseJSON v = typeMismatch "key output (a string or {label, content})" v

instance ToJSON KeyOutput where
  toJSON (KeyOutputText s) = String s
  toJSON (KeyOutputLabeled l c) = object ["label" .= l, "content" .= c]

-- | Who handed over to whom and when; other metadata fields are kept.
data HandoffMetadata = HandoffMetadata
  { fromAgent :: Text
  , toAgent :: Text
  , createdAt :: Text -- ^ RFC 3339
  , traceId :: Maybe Text
  , extraMetadata :: KM.KeyMap Value
  }
  deriving (Eq, Show)

-- | The design's handoff record.
data HandoffObject = HandoffObject
  { taskSummary :: Text
  , keyOutputs :: [KeyOutput]
  , metadata :: HandoffMetadata
  , customFields :: KM.KeyMap Value
  }
  deriving (Eq, Show)

-- | A field under its camelCase or its snake_case name.
either2 :: FromJSON a => Object -> Key -> Key -> Parser a
either2 o camel snake = o .: camel <|> o .: snake

either2m :: FromJSON a => Object -> Key -> Key -> Parser (Maybe a)
either2m o camel snake = (<|>) <$> o .:? camel <*> o .:? snake

instance FromJSON HandoffMetadata where
  parseJSON = withObject "HandoffMetadata" $ \o ->
    HandoffMetadata
      <$> either2 o "fromAgent" "from_agent"
      <*> either2 o "toAgent" "to_agent"
      <*> either2 o "createdAt" "created_at"
      <*> either2m o "traceId" "trace_id"
      <*> pure (foldr KM.delete o known)
    where
      known = ["fromAgent", "from_agent", "toAgent", "to_agent", "createdAt", "created_at", "traceId", "trace_id"]

instance ToJSON HandoffMetadata where
  toJSON m = Object $
    KM.fromList (["fromAgent" .= fromAgent m, "toAgent" .= toAgent m, "createdAt" .= createdAt m]
      ++ maybe [] (\t -> ["traceId" .= t]) (traceId m))
      <> extraMetadata m

instance FromJSON HandoffObject where
  parseJSON = withObject "HandoffObject" $ \o ->
    HandoffObject
      <$> either2 o "taskSummary" "task_summary"
      <*> either2 o "keyOutputs" "key_outputs"
      <*> o .: "metadata"
      <*> (maybe KM.empty id <$> either2m o "customFields" "custom_fields")

instance ToJSON HandoffObject where
  toJSON h = object
    [ "taskSummary" .= taskSummary h
    , "keyOutputs" .= keyOutputs h
    , "metadata" .= metadata h
    , "customFields" .= customFields h
    ]

-- | The core's validation; the normalized handoff comes back typed.
-- Throws 'Turnfit.TurnfitError' (INVALID_JSON naming the field) when invalid.
validateHandoffObject :: HandoffObject -> IO HandoffObject
validateHandoffObject h = do
  v <- handoffValidate (toJSON h)
  case fromJSON v of
    Success x -> pure x
    Error e -> fail ("validateHandoffObject: the core's handoff did not decode: " ++ e)

-- | The prompt block for the receiving agent, under an optional token
-- budget (custom fields go first, then key outputs are shortened).
handoffPromptText :: Maybe Int -> HandoffObject -> IO Text
handoffPromptText budget h = do
  r <- handoffRender (toJSON h) (fmap (\b -> object ["budget" .= b]) budget)
  case r of
    Object o | Just (String t) <- KM.lookup "text" o -> pure t
    _ -> fail "handoffPromptText: no text in the render result"

-- | The layout of a rendered handoff (the core's render option @format@).
data HandoffFormat
  = FormatBlock
    -- ^ @<handoff ...>@ ... @</handoff>@, delimited so content cannot end it
    -- early: the default.
  | FormatPromptText
    -- ^ The design's @toPromptText@ layout: @=== Context from Previous
    -- Agent ===@, @Task:@, @Key Outputs:@, @Metadata:@, a closing rule.
  deriving (Eq, Show, Enum, Bounded)

-- | Render options: a token budget, a model (or encoding) to count with,
-- whether custom fields are written, the layout. 'Nothing' leaves the
-- core's default.
data RenderHandoff = RenderHandoff
  { rhBudget :: Maybe Int
  , rhModel :: Maybe Text
  , rhEncoding :: Maybe Text
  , rhIncludeCustomFields :: Maybe Bool
  , rhFormat :: Maybe HandoffFormat
  }
  deriving (Eq, Show)

-- | No budget, cl100k_base, custom fields written, block layout.
renderHandoff :: RenderHandoff
renderHandoff = RenderHandoff Nothing Nothing Nothing Nothing Nothing

instance ToJSON RenderHandoff where
  toJSON r = object $ concat
    [ maybe [] (\b -> ["budget" .= b]) (rhBudget r)
    , maybe [] (\m -> ["model" .= m]) (rhModel r)
    , maybe [] (\e -> ["encoding" .= e]) (rhEncoding r)
    , maybe [] (\c -> ["include_custom_fields" .= c]) (rhIncludeCustomFields r)
    , maybe [] (\f -> ["format" .= formatName f]) (rhFormat r)
    ]
    where
      formatName FormatBlock = "block" :: Text
      formatName FormatPromptText = "prompt_text"

-- | A key output that was cut to fit.
data ShortenedOutput = ShortenedOutput
  { soIndex :: Int, soOriginalTokens :: Int, soTokens :: Int }
  deriving (Eq, Show)

instance FromJSON ShortenedOutput where
  parseJSON = withObject "shortened output" $ \o ->
    ShortenedOutput <$> o .: "index" <*> o .: "original_tokens" <*> o .: "tokens"

-- | The render result: the text, its exact token count, and what was cut.
data HandoffRendered = HandoffRendered
  { hrText :: Text
  , hrTokens :: Int
  , hrBudget :: Maybe Int
  , hrShortened :: [ShortenedOutput]
  , hrOmitted :: [Int]
  , hrOmittedCustomFields :: [Text]
  }
  deriving (Eq, Show)

instance FromJSON HandoffRendered where
  parseJSON = withObject "handoff render result" $ \o -> HandoffRendered
    <$> o .: "text" <*> o .: "tokens" <*> o .:? "budget" <*> o .: "shortened" <*> o .: "omitted"
    <*> o .:? "omitted_custom_fields" .!= []

-- | Renders a handoff with options, the result typed. Custom fields go
-- through aeson's 'Value', which sorts keys: under a budget they are then
-- dropped in sorted order, last first ('Turnfit.handoffRenderBytes' keeps
-- the order written).
renderHandoffObject :: RenderHandoff -> HandoffObject -> IO HandoffRendered
renderHandoffObject opts h = do
  r <- handoffRender (toJSON h) (Just (toJSON opts))
  case fromJSON r of
    Success x -> pure x
    Error e -> throwIO (TurnfitError statusInvalidJson (T.pack ("decoding the handoff render result: " ++ e)))

-- | The design's @toPromptText@: the handoff in its plain layout, whole
-- (no budget). The text is the core's (format @prompt_text@), so every
-- binding renders the same bytes.
toPromptText :: HandoffObject -> IO Text
toPromptText h = hrText <$> renderHandoffObject renderHandoff {rhFormat = Just FormatPromptText} h
