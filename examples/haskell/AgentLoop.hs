{-# LANGUAGE OverloadedStrings #-}

-- | A small agent loop over the Haskell binding, with a mock model:
--
-- * before every model call, a preflight; when the window should be
--   compacted, a summarize compaction whose summary request is answered by
--   the (mock) model and applied with 'windowApplySummary';
-- * every tool call is a tracer span (start / end, exported at the end);
-- * agents hand work to each other through a call stack, which stops the
--   planner -> coder -> planner cycle.
--
-- Build and run it with bindings/haskell/test.sh (cabal target
-- @agent-loop@), or: cabal run agent-loop from bindings/haskell.
module Main (main) where

import Control.Exception (try)
import Control.Monad (forM_, when)
import Data.Aeson (Value (..), object, (.=))
import qualified Data.Aeson as A
import qualified Data.ByteString.Lazy as BL
import qualified Data.Text.Encoding as TE
import Data.Foldable (toList)
import qualified Data.Aeson.Key as K
import qualified Data.Aeson.KeyMap as KM
import Data.IORef
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Text.IO as TIO

import Turnfit

field :: Text -> Value -> Value
field k (Object o) = maybe Null id (KM.lookup (K.fromText k) o)
field _ _ = Null

text :: Value -> Text
text (String s) = s
text v = TE.decodeUtf8 (BL.toStrict (A.encode v))

msg :: Text -> Text -> Value
msg role c = object ["role" .= role, "content" .= c]

-- | The mock model: answers a summary prompt with a digest, otherwise asks
-- for a tool on even steps and replies on odd ones.
mockModel :: Int -> Text -> IO (Either (Text, Text) Text)
mockModel step prompt
  | "summar" `T.isInfixOf` T.toLower prompt = pure (Right "Summary: the user asked for a repo survey; files were listed and read.")
  | even step = pure (Left ("read_file", "src/file" <> T.pack (show step) <> ".rs"))
  | otherwise = pure (Right ("Step " <> T.pack (show step) <> " done."))

-- | The mock tool: a long output, so the conversation grows quickly.
runTool :: Text -> Text -> IO Text
runTool tool arg = pure (T.unwords (replicate 120 (tool <> ":" <> arg)))

-- | Makes room before a model call: preflight, then compact if needed.
makeRoom :: Window -> IO ()
makeRoom w = do
  pre <- windowPreflight w Nothing
  let verdict = text (field "verdict" pre)
  when (verdict /= "fits") $ do
    TIO.putStrLn ("  preflight: " <> verdict <> ", " <> text (field "prompt_tokens" pre) <> " tokens; compacting")
    r <- windowCompact w (Just (object ["strategy" .= ("summarize" :: Text)]))
    case text (field "status" r) of
      "needs_summary" -> do
        let req = field "request" r
        answer <- mockModel 1 ("summarize: " <> text (field "prompt" req))
        let summary = either snd id answer
        rep <- windowApplySummary w (text (field "id" req)) summary
        TIO.putStrLn ("  summary applied: " <> text (field "tokens_before" rep) <> " -> " <> text (field "tokens_after" rep) <> " tokens")
      _ -> TIO.putStrLn "  compacted without a summary"

agentLoop :: Tracer -> CallStack -> Text -> IO ()
agentLoop tracer stack agent = do
  chain <- callStackToJson stack
  TIO.putStrLn ("agent " <> agent <> " (stack " <> text (field "agents" chain) <> ")")
  w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (3000 :: Int), "reserved_output" .= (300 :: Int)]))
  windowLoad w (Array mempty)
  _ <- windowPush w (msg "system" ("You are the " <> agent <> " agent."))
  _ <- windowPush w (msg "user" "Survey the repository and report.")
  forM_ [1 .. 10 :: Int] $ \step -> do
    makeRoom w
    answer <- mockModel step "next"
    case answer of
      Left (tool, arg) -> do
        let callId = "call_" <> T.pack (show step)
        now <- clockNowUs
        sid <- tracerStart tracer tool (Just (object ["agent_id" .= agent, "tool_call_id" .= callId])) (fromIntegral (T.length arg)) now
        out <- runTool tool arg
        done <- clockNowUs
        tracerEnd tracer sid SpanSuccess (fromIntegral (T.length out)) Nothing done
        _ <- windowPush w (object ["role" .= ("assistant" :: Text), "content" .= Null, "tool_calls" .=
          [object ["id" .= callId, "type" .= ("function" :: Text), "function" .= object ["name" .= tool, "arguments" .= ("{}" :: Text)]]]])
        _ <- windowPush w (object ["role" .= ("tool" :: Text), "tool_call_id" .= callId, "content" .= out])
        pure ()
      Right reply -> do
        _ <- windowPush w (msg "assistant" reply)
        _ <- windowPush w (msg "user" "Continue.")
        pure ()
  final <- windowPreflight w Nothing
  TIO.putStrLn ("  " <> agent <> " ends at " <> text (field "prompt_tokens" final) <> " tokens (" <> text (field "verdict" final) <> ")")

main :: IO ()
main = do
  TIO.putStrLn ("turnfit " <> version)
  tracer <- newTracer Nothing
  root <- newCallStack defaultCallStackDepth
  visits <- newIORef (0 :: Int)
  -- planner hands to coder, coder hands back to planner: the stack refuses.
  let handoff stack agent = do
        r <- try (callStackEnter stack agent)
        case r of
          Left e -> TIO.putStrLn ("handoff to " <> agent <> " refused (" <> statusName (status e) <> "): " <> message e)
          Right s -> do
            modifyIORef' visits (+ 1)
            agentLoop tracer s agent
            handoff s (if agent == "planner" then "coder" else "planner")
  handoff root "planner"
  n <- readIORef visits
  now <- clockNowUs
  ex <- tracerExport tracer now
  TIO.putStrLn ("agents run: " <> T.pack (show n) <> "; tool spans: " <> T.intercalate ", " [text (field "tool" t) <> " x" <> text (field "count" t) | t <- tools ex])
  where
    tools ex = case field "tools" ex of
      Array a -> toList a
      _ -> []
