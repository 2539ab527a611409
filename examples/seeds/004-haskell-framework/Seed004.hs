{-# LANGUAGE OverloadedStrings #-}

-- | Seed document 004 (the Haskell agentic framework) through the Haskell
-- binding, in the design's own idioms: the one-shot count for a model name,
-- the HandoffObject record read from the design's JSON and rendered as its
-- toPromptText, tool calls logged through monad-logger's LoggingT and a
-- LogHandler instance, typed tracer and skill records, the call-stack guard.
-- Run by run.sh (examples/seeds/run-all.sh) from this folder; prints "ok:"
-- per check and exits 1 at the first that fails.
module Main (main) where

import Control.Concurrent (threadDelay)
import Control.Exception (throwIO)
import Control.Monad (unless)
import Control.Monad.IO.Class (liftIO)
import Control.Monad.Logger (LogLevel (..), fromLogStr, runLoggingT)
import qualified Data.Aeson as A
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString as B
import Data.IORef (modifyIORef', newIORef, readIORef)
import qualified Data.Map.Strict as M
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import System.Exit (exitFailure)

import Turnfit
import qualified Turnfit.Handoff as H
import Turnfit.Logging (LogEntry (..), LogHandler (..), logEvents, loggingTHandler)
import qualified Turnfit.Records as R
import Turnfit.Typed (ToolResult (..), withToolSpan)

check :: Bool -> String -> IO ()
check ok what = do
  unless ok $ putStrLn ("FAILED: " ++ what) >> exitFailure
  putStrLn ("ok: " ++ what)

-- | A back end of the host's own, as the design plugs one in.
newtype Collect = Collect (LogEntry -> IO ())

instance LogHandler Collect where
  logEntry (Collect f) = f

main :: IO ()
main = do
  -- Tokenizer (design section 1): countTokens :: ModelName -> Text -> IO Int.
  n <- countTokensForModel "gpt-4" "hello world"
  check (n == 2) "countTokensForModel \"gpt-4\" \"hello world\" == 2 (cl100k_base)"
  o <- countTokensForModel "gpt-4o" "Collect the failing tests of the parser."
  o200 <- newTokenizer "o200k_base"
  check (o == countTokens o200 "Collect the failing tests of the parser.") "a gpt-4o name counts with o200k_base"

  -- HandoffObject (section 7): the design's JSON as written, toPromptText.
  raw <- B.readFile "handoff.json"
  h <- case A.eitherDecodeStrict' raw of
    Right v -> H.validateHandoffObject v
    Left e -> throwIO (userError e)
  check (H.fromAgent (H.metadata h) == "collector" && length (H.keyOutputs h) == 2) "handoff.json decodes to a HandoffObject the core accepts"
  txt <- H.toPromptText h {H.customFields = KM.empty}
  let ls = T.lines txt
  check (take 3 ls == ["=== Context from Previous Agent ===", "Task: Collect the failing tests of the parser and hand them to the fixer agent.", "Key Outputs:"])
    "toPromptText: the design's header, Task: and Key Outputs: lines"
  check ("Metadata: from=collector to=fixer created_at=2026-03-01T12:00:00Z" `elem` ls && last ls == T.replicate 35 "=")
    "toPromptText: Metadata: line and the closing rule"
  r <- H.renderHandoffObject H.renderHandoff {H.rhFormat = Just H.FormatPromptText, H.rhBudget = Just 90} h
  check (H.hrTokens r <= 90 && H.hrOmittedCustomFields r == ["notes", "reviewers", "ticket"] && null (H.hrOmitted r))
    "prompt text under budget 90: custom fields go first (aeson sorts keys), both key outputs stay"

  -- The omission note never evicts an output that fits (issue 34).
  let long = H.KeyOutputLabeled "test.log" (T.replicate 200 "line of log output with details\n")
      tight = h {H.keyOutputs = ["short one", long], H.customFields = KM.empty}
  fixed <- H.hrTokens <$> H.renderHandoffObject H.renderHandoff tight {H.keyOutputs = []}
  cl <- newTokenizer "cl100k_base"
  let whole = fixed + countTokens cl "\n## Key outputs\n" + 2 * countTokens cl "- short one\n"
  results <- mapM (\b -> H.renderHandoffObject H.renderHandoff {H.rhBudget = Just b} tight) [whole .. whole + 30]
  check (all (\x -> "- short one\n" `T.isInfixOf` H.hrText x && 0 `notElem` H.hrOmitted x) results)
    ("budgets " ++ show whole ++ ".." ++ show (whole + 30) ++ ": the short output is never evicted by the omission note")
  check (any (\x -> "- [1 more key output omitted for length]" `T.isInfixOf` H.hrText x) results)
    "the note is written where it fits beside the outputs"

  -- Logging (section 6) and timeouts (section 8): every tool call logged
  -- through LoggingT, failures at LevelError, with the design's LogEntry.
  tracer <- newTracer (Just (A.object ["span_finished_events" A..= True]))
  logged <- newIORef []
  entries <- newIORef []
  let sink _ src lvl msg = modifyIORef' logged ((src, lvl, TE.decodeUtf8 (fromLogStr msg)) :)
  runLoggingT (do
      viaLogger <- loggingTHandler
      liftIO $ do
        onTracerEvents tracer (Just (\e -> viaLogger e >> logEvents (Collect (\x -> modifyIORef' entries (x :))) e))
        a <- withToolSpan tracer "read_file" (Just (A.object ["agent_id" A..= ("fixer" :: Text)])) 10000000 (pure ("contents" :: Text))
        b <- withToolSpan tracer "run_tests" (Just (A.object ["agent_id" A..= ("fixer" :: Text)])) 20000 (threadDelay 2000000 >> pure ("never" :: Text))
        c <- withToolSpan tracer "web_fetch" Nothing 10000000 (throwIO (userError "connection refused") :: IO Text)
        check (isOk a && isTimeout b && isException c) "withToolSpan: one success, one timeout, one exception") sink
  -- The tracer also reports the timed-out call as overdue (a warning) before it
  -- ends; the tool-call entries are the span_finished ones ("tool NAME ...").
  lgAll <- reverse <$> readIORef logged
  let lg = filter (\(_, _, m) -> " tool " `T.isInfixOf` m) lgAll
  check (map (\(_, l, _) -> l) lg == [LevelInfo, LevelError, LevelError]) "LoggingT got 3 tool calls: info, error, error"
  check (any (\(_, l, m) -> l == LevelWarn && "span_overdue" `T.isInfixOf` m) lgAll) "the overdue call logged as a warning"
  check (all (\(s, _, _) -> s == "turnfit") lgAll) "log source turnfit"
  es <- filter (("tool " `T.isPrefixOf`) . entryMessage) . reverse <$> readIORef entries
  check (map entryToolName es == map Just ["read_file", "run_tests", "web_fetch"] && map entryAgentId es == [Just "fixer", Just "fixer", Nothing])
    "LogHandler instance: LogEntry with tool name and agent id"
  check ((KM.lookup "error_category" . entryMetadata) (es !! 1) == Just (A.String "timeout")) "the timeout's entry carries its category"

  -- Typed records: the tracer export, the skill listing.
  ex <- R.tracerExportTyped tracer 0
  check (R.teSpansEnded ex == 3 && M.lookup "timeout" (R.teErrorCategories ex) == Just 1) "typed TraceExport: 3 ended, 1 timeout"
  sk <- openSkills "skills" Nothing
  lst <- R.skillsListTyped sk
  check (map R.seName (R.slSkills lst) == ["code-review", "debugging-checklist"] && map R.igPath (R.slIgnored lst) == ["README.md"])
    "typed SkillListing: both layouts, README ignored"
  check ([R.shCategory =<< R.seHeader s | s <- R.slSkills lst] == [Just "engineering", Just "debugging"]) "categories from the front-matter"

  -- Circular-dependency detection (section 9): depth 5, cycles refused.
  s0 <- newCallStack defaultCallStackDepth
  let enter s x = either (throwIO . userError . show) pure =<< callStackEnterE s x
  s5 <- foldlM' enter s0 ["supervisor", "researcher", "coder", "reviewer", "tester"]
  sixth <- callStackEnterE s5 "writer"
  check (either ((== statusDepthExceeded) . status) (const False) sixth) "a sixth agent is DEPTH_EXCEEDED"
  s2 <- foldlM' enter s0 ["supervisor", "coder"]
  cyc <- callStackEnterE s2 "supervisor"
  check (either (\e -> status e == statusCycleDetected && "supervisor -> coder -> supervisor" `T.isInfixOf` message e) (const False) cyc)
    "re-entering an agent is CYCLE_DETECTED with the chain"
  where
    isOk (ToolOk _) = True
    isOk _ = False
    isTimeout (ToolTimedOut _) = True
    isTimeout _ = False
    isException (ToolException _) = True
    isException _ = False
    foldlM' f z xs = case xs of
      [] -> pure z
      (x : rest) -> f z x >>= \z' -> foldlM' f z' rest
