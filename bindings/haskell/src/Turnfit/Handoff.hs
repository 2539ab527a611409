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
  ) where

import Control.Applicative ((<|>))
import Data.Aeson
import qualified Data.Aeson.KeyMap as KM
import Data.Aeson.Types (Parser, typeMismatch)
import Data.String (IsString (..))
import Data.Text (Text)
import qualified Data.Text as T

import Turnfit (handoffRender, handoffValidate)

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
