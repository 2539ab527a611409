{-# LANGUAGE OverloadedStrings #-}

-- | Logging handlers for the events turnfit raises (docs/formats.md, "Events").
--
-- The library never prints: a handle reports what it did through the event
-- callback ('onWindowEvents', 'onBreakerEvents', 'onTracerEvents',
-- 'openSkillsWithEvents'). These turn that callback into the three places a
-- program usually logs to. A handler runs on the thread that made the call;
-- each writes a whole line in one write, so lines from several threads do
-- not interleave.
--
-- > h <- fileHandler "turnfit-events.jsonl"
-- > onWindowEvents w (Just (consoleHandler <> h))
--
-- The Haskell framework design (seed document 004) logs through
-- monad-logger with pluggable back ends; that is the second half of this
-- module. An event becomes a 'LogEntry' (a monad-logger 'LogLevel', the
-- agent and tool when the payload names them, a one-line message, the time,
-- the payload as metadata), and any 'LogHandler' takes it:
--
-- > runStdoutLoggingT $ do
-- >   h <- loggingTHandler                  -- logs through this LoggingT
-- >   liftIO (onTracerEvents tracer (Just h))
--
-- > onTracerEvents tracer (Just (logEvents ColorizedStdout))
--
-- A tracer made with @{"span_finished_events": true}@ reports every tool
-- call that ended (@span_finished@), so each call is logged: at 'LevelInfo'
-- when it succeeded, 'LevelError' when it failed or timed out.
module Turnfit.Logging
  ( EventHandler
  , consoleHandler
  , jsonHandler
  , fileHandler
  , withFileHandler
  , renderEvent
    -- * Log entries and handlers (monad-logger)
  , LogLevel (..)
  , LogEntry (..)
  , LogHandler (..)
  , eventLevel
  , eventLogEntry
  , logEvents
  , ColorizedStdout (..)
  , JsonLogLines (..)
  , AtLeast (..)
  , HandlerFn (..)
  , MonadLoggerSink (..)
  , loggingTHandler
  , renderLogEntry
  ) where

import qualified Data.Aeson as A
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Lazy as BL
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import Data.Time.Clock (UTCTime, getCurrentTime)
import Data.Time.Format.ISO8601 (iso8601Show)
import Control.Exception (bracket)
import Control.Monad.Logger (Loc, LogLevel (..), LogSource, LogStr, MonadLoggerIO (..), defaultLoc, toLogStr)
import System.IO (BufferMode (..), Handle, IOMode (..), hClose, hSetBuffering, openFile, stderr, stdout)

import Turnfit (Event (..))

-- | What 'onWindowEvents' and the others take. Handlers combine with '<>'
-- (both run, in order).
type EventHandler = Event -> IO ()

-- | One readable line on stderr: @turnfit: KIND {payload}@.
consoleHandler :: EventHandler
consoleHandler e = B.hPut stderr (BC.concat ["turnfit: ", TE.encodeUtf8 (eventKind e), " ", json e, "\n"])

-- | JSON Lines on a handle: the event's payload (its @kind@ field and the
-- kind's fields, as docs/formats.md lists them), one object per line.
jsonHandler :: Handle -> EventHandler
jsonHandler h e = B.hPut h (json e <> "\n")

-- | JSON Lines appended to a file (created if missing), line-buffered. The
-- file stays open for the program's life, like any log.
fileHandler :: FilePath -> IO EventHandler
fileHandler path = do
  h <- openFile path AppendMode
  hSetBuffering h LineBuffering
  pure (jsonHandler h)

-- | 'fileHandler' for the duration of an action, closing the file after it
-- (GHC locks a file open for writing, so the same program can read it only
-- then). Detach the handler ('onWindowEvents' w Nothing) before the action
-- ends if the handle outlives it: a write to the closed file fails, and the
-- binding drops a failing handler's exception.
withFileHandler :: FilePath -> (EventHandler -> IO a) -> IO a
withFileHandler path k = bracket (openFile path AppendMode) hClose $ \h -> do
  hSetBuffering h LineBuffering
  k (jsonHandler h)

-- | The payload as one line of JSON (what 'jsonHandler' writes, without the
-- newline).
renderEvent :: Event -> B.ByteString
renderEvent = json

json :: Event -> B.ByteString
json = BL.toStrict . A.encode . eventPayload

-- ---------------------------------------------------------------------------
-- Log entries and handlers

-- | One log line as the design has it. The fields are prefixed (@entry@)
-- so they do not clash with 'Turnfit.Handoff.metadata' when both modules
-- are imported; 'entryMetadata' is the event's whole payload.
data LogEntry = LogEntry
  { entryLevel :: !LogLevel
  , entryAgentId :: !(Maybe Text)
  , entryToolName :: !(Maybe Text)
  , entryMessage :: !Text
  , entryTimestamp :: !UTCTime
  , entryMetadata :: !(KM.KeyMap A.Value)
  }
  deriving (Eq, Show)

-- | A back end for log entries (the design's @LogHandler@ class).
-- Instances here: 'ColorizedStdout', 'JsonLogLines', 'MonadLoggerSink'
-- (monad-logger's logging function), 'HandlerFn' (any function),
-- 'AtLeast' (a minimum level in front of another handler).
class LogHandler h where
  logEntry :: h -> LogEntry -> IO ()

-- | One line per entry on stdout, the level in ANSI colour (plain escape
-- codes: no terminal library is needed).
data ColorizedStdout = ColorizedStdout deriving (Eq, Show)

instance LogHandler ColorizedStdout where
  logEntry _ e = B.hPut stdout (TE.encodeUtf8 (colour (entryLevel e) <> renderLogEntry e <> "\ESC[0m\n"))
    where
      colour l = case l of
        LevelError -> "\ESC[31m"
        LevelWarn -> "\ESC[33m"
        LevelInfo -> "\ESC[32m"
        _ -> "\ESC[2m"

-- | Each entry as a JSON object on one line: @level@, @agent_id@,
-- @tool_name@, @message@, @timestamp@ (ISO 8601), @metadata@.
newtype JsonLogLines = JsonLogLines Handle

instance LogHandler JsonLogLines where
  logEntry (JsonLogLines h) e = B.hPut h (BL.toStrict (A.encode o) <> "\n")
    where
      o = A.object
        [ "level" A..= levelName (entryLevel e)
        , "agent_id" A..= entryAgentId e
        , "tool_name" A..= entryToolName e
        , "message" A..= entryMessage e
        , "timestamp" A..= iso8601Show (entryTimestamp e)
        , "metadata" A..= entryMetadata e
        ]

-- | Entries below the level are dropped ('LevelDebug' < 'LevelInfo' <
-- 'LevelWarn' < 'LevelError', monad-logger's order).
data AtLeast h = AtLeast !LogLevel h

instance LogHandler h => LogHandler (AtLeast h) where
  logEntry (AtLeast l h) e
    | entryLevel e >= l = logEntry h e
    | otherwise = pure ()

-- | Any function as a handler (a test's 'Data.IORef.IORef', a queue).
newtype HandlerFn = HandlerFn (LogEntry -> IO ())

instance LogHandler HandlerFn where
  logEntry (HandlerFn f) = f

-- | monad-logger's logging function, as 'askLoggerIO' returns it: entries
-- go to whatever the 'Control.Monad.Logger.LoggingT' runs with
-- (@runStdoutLoggingT@, @runFileLoggingT@, a filter), source @turnfit@.
newtype MonadLoggerSink = MonadLoggerSink (Loc -> LogSource -> LogLevel -> LogStr -> IO ())

instance LogHandler MonadLoggerSink where
  logEntry (MonadLoggerSink f) e = f defaultLoc "turnfit" (entryLevel e) (toLogStr (renderLogEntry e))

-- | An event handler logging through the current 'MonadLoggerIO' (a
-- 'Control.Monad.Logger.LoggingT'): pass it to 'Turnfit.onTracerEvents' and
-- the others. The handler keeps the logger it was made with, so it may run
-- on any thread, after the 'LoggingT' block too (as long as its back end is
-- still open).
loggingTHandler :: MonadLoggerIO m => m EventHandler
loggingTHandler = logEvents . MonadLoggerSink <$> askLoggerIO

-- | Turns events into entries for a 'LogHandler'.
logEvents :: LogHandler h => h -> EventHandler
logEvents h e = eventLogEntry e >>= logEntry h

-- | The entry for an event, stamped now.
eventLogEntry :: Event -> IO LogEntry
eventLogEntry e = do
  now <- getCurrentTime
  let o = case eventPayload e of
        A.Object m -> m
        _ -> KM.empty
      str k = case KM.lookup k o of
        Just (A.String t) -> Just t
        _ -> Nothing
      tool = case eventKind e of
        "breaker_state_changed" -> Nothing
        _ -> str "tool"
  pure LogEntry
    { entryLevel = eventLevel e
    , entryAgentId = str "agent_id"
    , entryToolName = tool
    , entryMessage = message (eventKind e) o
    , entryTimestamp = now
    , entryMetadata = o
    }
  where
    message "span_finished" o =
      let get k = case KM.lookup k o of
            Just (A.String t) -> t
            Just (A.Number n) -> T.pack (show (round n :: Integer))
            _ -> "?"
          err = case KM.lookup "error" o of
            Just (A.String t) -> ": " <> t
            _ -> ""
       in "tool " <> get "tool" <> " " <> get "outcome" <> " in " <> get "duration_us" <> " us" <> err
    message kind o = kind <> " " <> TE.decodeUtf8 (BL.toStrict (A.encode (KM.delete "kind" o)))

-- | The level of an event: a tool call that failed or timed out, and a
-- budget crossed into overflow, are errors; repeats, overdue spans, a
-- repair, a breaker opening, a cancelled call and other budget crossings
-- are warnings; a compaction, a successful call and other breaker moves are
-- information; a skipped skill file is debug. The core has no levels: this
-- is the binding's reading of the payload for monad-logger.
eventLevel :: Event -> LogLevel
eventLevel e = case eventKind e of
  "span_finished" -> case field "outcome" of
    Just "success" -> LevelInfo
    Just "cancelled" -> LevelWarn
    _ -> LevelError
  "budget_crossed" -> if field "to" == Just "overflow" then LevelError else LevelWarn
  "breaker_state_changed" -> if field "to" == Just "open" then LevelWarn else LevelInfo
  "span_repeated" -> LevelWarn
  "span_overdue" -> LevelWarn
  "repaired" -> LevelWarn
  "compacted" -> LevelInfo
  "skill_skipped" -> LevelDebug
  _ -> LevelInfo
  where
    field k = case eventPayload e of
      A.Object o | Just (A.String t) <- KM.lookup k o -> Just (t :: Text)
      _ -> Nothing

-- | @LEVEL [agent] [tool] message@, one line.
renderLogEntry :: LogEntry -> Text
renderLogEntry e =
  T.concat
    [ levelName (entryLevel e)
    , maybe "" (\a -> " agent=" <> a) (entryAgentId e)
    , maybe "" (\t -> " tool=" <> t) (entryToolName e)
    , " "
    , entryMessage e
    ]

levelName :: LogLevel -> Text
levelName l = case l of
  LevelDebug -> "debug"
  LevelInfo -> "info"
  LevelWarn -> "warn"
  LevelError -> "error"
  LevelOther t -> t
