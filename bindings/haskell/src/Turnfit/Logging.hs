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
module Turnfit.Logging
  ( EventHandler
  , consoleHandler
  , jsonHandler
  , fileHandler
  , withFileHandler
  , renderEvent
  ) where

import qualified Data.Aeson as A
import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Lazy as BL
import qualified Data.Text.Encoding as TE
import Control.Exception (bracket)
import System.IO (BufferMode (..), Handle, IOMode (..), hClose, hSetBuffering, openFile, stderr)

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
