{-# LANGUAGE OverloadedStrings #-}

-- | The hspec suite of the Haskell binding. Run from the repository root
-- (bindings/haskell/test.sh does): the conformance vectors are read from
-- tests/vectors/ and the skills vectors' roots are relative to the root.
module Main (main) where

import Control.Concurrent (forkIO, threadDelay)
import Control.Concurrent.MVar (newEmptyMVar, putMVar, takeMVar)
import Control.Exception (evaluate, throwIO, try)
import Control.Monad (foldM, forM, forM_, replicateM, unless, void, when)
import Data.Aeson (Value (..), object, (.=))
import qualified Data.Aeson as A
import qualified Data.Aeson.Key as K
import qualified Data.Aeson.KeyMap as KM
import qualified Data.ByteString as B
import qualified Data.ByteString.Char8 as BC
import qualified Data.ByteString.Internal as BI
import qualified Data.ByteString.Lazy as BL
import Data.IORef (newIORef, readIORef, modifyIORef', writeIORef)
import Data.List (isPrefixOf)
import qualified Data.Map.Strict as M
import Data.Maybe (fromMaybe)
import Data.Scientific (toBoundedInteger)
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import qualified Data.Vector as V
import Data.Word (Word32, Word64)
import System.Mem (performGC)
import System.Directory (doesFileExist, getCurrentDirectory, getTemporaryDirectory, removeFile, setCurrentDirectory)
import System.Exit (ExitCode (..))
import System.FilePath (takeDirectory, (</>))
import System.IO.Unsafe (unsafePerformIO)
import System.Process (readProcessWithExitCode)
import Test.Hspec hiding (fit)
import Test.Hspec.QuickCheck (modifyMaxSuccess, prop)
import Test.QuickCheck

import Turnfit
import RawJson
import qualified Turnfit.Handoff as H
import qualified Turnfit.Logging as L
import qualified Turnfit.Raw as R
import qualified Turnfit.Records as TR
import qualified Control.Monad.Logger as ML
import Control.Monad.IO.Class (liftIO)
import Turnfit.Typed
import qualified Data.ByteString.Unsafe as BU
import Foreign.C.String (peekCString)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (castPtr, nullPtr)
import Foreign.Storable (peek, poke)
import GHC.ForeignPtr (ForeignPtr (..), ForeignPtrContents (..))

-- ---------------------------------------------------------------------------
-- helpers

-- | A vector file's vectors, each as aeson reads it (for names, ops and
-- expectations) and as written (its inputs go to the library as this text:
-- key order is part of some inputs, and aeson's Value sorts keys).
loadVectors :: FilePath -> IO [(Value, Raw)]
loadVectors path = do
  bs <- B.readFile path
  vs <- case A.eitherDecodeStrict' bs of
    Right (Object o) | Just (Array vs) <- KM.lookup "vectors" o -> pure (V.toList vs)
    Right _ -> fail (path ++ ": no vectors array")
    Left e -> fail (path ++ ": " ++ e)
  raws <- case parseRaw bs of
    Right (Raw _ (RObject kvs)) | Just (Raw _ (RArray rs)) <- lookup "vectors" kvs -> pure rs
    Right _ -> fail (path ++ ": the scanner found no vectors array")
    Left e -> fail (path ++ ": " ++ e)
  -- Every slice must read back as the vector aeson read: the scanner cannot
  -- change an input unnoticed.
  unless (length raws == length vs && and (zipWith (\v r -> A.decodeStrict' (rawText r) == Just v) vs raws)) $
    fail (path ++ ": the raw vector texts differ from aeson's reading")
  pure (zip vs raws)

-- | Whether a ByteString's bytes are memory it adopted with a finalizer
-- (the library's buffer) rather than a GHC-allocated copy, which is a
-- 'PlainPtr' or 'MallocPtr'.
adopted :: B.ByteString -> Bool
adopted bs = case BI.toForeignPtr bs of
  (ForeignPtr _ (PlainForeignPtr _), _, _) -> True
  _ -> False

-- | The process's resident set size (VmRSS in /proc/self/status), in bytes.
rssBytes :: IO Int
rssBytes = do
  s <- readFile "/proc/self/status"
  _ <- evaluate (length s)
  case [read (words l !! 1) | l <- lines s, "VmRSS:" `isPrefixOf` l] of
    (kb : _) -> pure (kb * 1024)
    [] -> fail "no VmRSS in /proc/self/status"

-- | The library's JSON text as a Value (for comparing with the expectation).
decodeOut :: B.ByteString -> IO Value
decodeOut bs = either (\e -> fail ("turnfit returned bad JSON: " ++ e)) pure (A.eitherDecodeStrict' bs)

(.!) :: Value -> Text -> Value
(Object o) .! k = fromMaybe Null (KM.lookup (K.fromText k) o)
_ .! _ = Null

str :: Value -> Text
str (String s) = s
str v = error ("not a string: " ++ show v)

int :: Value -> Int
int (Number n) = fromMaybe (error "not an int") (toBoundedInteger n)
int v = error ("not a number: " ++ show v)

maybeV :: Value -> Maybe Value
maybeV Null = Nothing
maybeV v = Just v

-- | The expected {"error": kind} for a failure.
errorValue :: TurnfitError -> Value
errorValue e = object ["error" .= statusKindName (status e)]

-- | Runs an action and turns a TurnfitError into {"error": kind}.
orError :: IO Value -> IO Value
orError act = either errorValue id <$> try act

-- | Tokenizers by (encoding, special), made once and shared by all vectors.
tokenizers :: M.Map (Text, SpecialTokens) Tokenizer
tokenizers = unsafePerformIO $ fmap M.fromList $
  forM [(e, s) | e <- ["cl100k_base", "o200k_base", "p50k_base", "r50k_base", "o200k_harmony", "p50k_edit", "gpt2"], s <- [Ordinary, Recognize]] $ \k@(e, s) ->
    (,) k <$> newTokenizerWith s e
{-# NOINLINE tokenizers #-}

tok :: Text -> Tokenizer
tok e = tokenizers M.! (e, Ordinary)

cl100k :: Tokenizer
cl100k = tok "cl100k_base"

-- ---------------------------------------------------------------------------
-- vector runners

-- | tests/vectors/file_tokenizer.json: tokenizers loaded from tests/vectors/files/.
runFileTokenizerVector :: Value -> IO Value
runFileTokenizerVector v = orError $ do
  let i = v .! "input"
      sp = if i .! "special" == String "recognize" then Recognize else Ordinary
  t <- openFileTokenizer sp Nothing ("tests/vectors/" ++ T.unpack (str (i .! "file")))
  case str (v .! "op") of
    "file_encode" -> do
      let text = str (i .! "text")
          addSpecial = i .! "add_special" == Bool True
      ids <- fileEncode t addSpecial text
      n <- fileCountTokens t text
      pure (object ["ids" .= ids, "count" .= n])
    "file_decode" -> do
      s <- fileDecode t (map (fromIntegral . int) (arr (i .! "ids")))
      pure (object ["text" .= s])
    op -> fail ("unknown file tokenizer op " ++ T.unpack op)

runTokenizerVector :: Value -> IO Value
runTokenizerVector v = orError $ case str (v .! "op") of
  "encode" -> do
    let t = tokenizers M.! (enc, if str (i .! "special") == "recognize" then Recognize else Ordinary)
    ids <- encodeTokensIO t text
    n <- countTokensIO t text
    -- The pure functions must agree with the IO ones.
    unless (encodeTokens t text == ids && countTokens t text == n) $ fail "pure /= IO"
    pure (object ["ids" .= ids, "count" .= n])
  "decode" -> do
    let ids = map (fromIntegral . int) (arr (i .! "ids")) :: [Word32]
        mode = if str (i .! "mode") == "strict" then Strict else Replace
    s <- decodeTokens (tok enc) mode ids
    pure (object ["text" .= s])
  "count_until_limit" -> do
    let limit = int (i .! "limit")
    (n, exceeded) <- countUntilLimit (tok enc) limit text
    pure $
      if exceeded
        then object ["exceeded" .= True, "tokens_min" .= (if n > limit then limit + 1 else n)]
        else object ["tokens" .= n, "exceeded" .= False]
  "truncate" -> do
    let side = case str (i .! "side") of
          "head" -> KeepHead
          "tail" -> KeepTail
          _ -> KeepBoth
    r <- truncateTokens (tok enc) side (str <$> maybeV (i .! "marker")) (int (i .! "max_tokens")) text
    pure $ object
      [ "text" .= truncatedText r, "tokens" .= truncatedTokens r
      , "original_tokens" .= countTokens (tok enc) text
      , "removed_tokens" .= truncatedRemoved r, "truncated" .= (truncatedText r /= text) ]
  op -> fail ("unknown tokenizer op " ++ T.unpack op)
  where
    i = v .! "input"
    enc = str (i .! "encoding")
    text = case i .! "text" of
      String s -> s
      _ -> ""

-- | Truncation vectors: `truncated` in the file is whether anything was cut
-- (a text that fits comes back unchanged, so the two agree).
tool' :: Value -> Text -> Value
tool' ex n = head ([g | g <- arr (ex .! "tools"), g .! "tool" == String n] ++ [Null])

arr :: Value -> [Value]
arr (Array a) = V.toList a
arr _ = []

-- | Window vectors: conversations and fit options go in as written in the
-- file ('windowLoadBytes', 'fitBytes').
runWindowVector :: (Value, Raw) -> IO Value
runWindowVector (v, raw) = orError $ case str (v .! "op") of
  "count_conversation" -> do
    w <- newWindow Nothing (str (i .! "model")) Nothing
    windowLoadBytes w conversation
    r <- windowPreflight w Nothing
    pure (object ["prompt_tokens" .= (r .! "prompt_tokens")])
  "preflight" -> do
    w <- newWindow Nothing (str (i .! "model")) (maybeV (i .! "budget"))
    windowLoadBytes w conversation
    windowPreflight w Nothing
  "repair" -> do
    w <- newWindow Nothing (str (i .! "model")) Nothing
    windowLoadBytes w conversation
    issues <- windowValidate w
    changes <- windowRepair w Nothing
    conv <- windowConversation w
    pure (object ["issues" .= issues, "conversation" .= conv, "changes" .= changes])
  "fit" -> do
    (c, r) <- fitBytes conversation (rawPath raw ["input", "options"])
    (\c' r' -> object ["conversation" .= c', "report" .= r']) <$> decodeOut c <*> decodeOut r
  op -> fail ("unknown window op " ++ T.unpack op)
  where
    i = v .! "input"
    conversation = rawPath raw ["input", "conversation"]

-- | Model vectors (tests/vectors/models.json): the fields of the built-in
-- registry's answer that the vector names, or the error kind.
runModelVector :: Value -> IO Value
runModelVector v = orError $ do
  r <- registryLookup Nothing (str (v .! "input" .! "model")) Nothing
  pure (object [K.fromText k .= (r .! k) | k <- ["family", "encoding", "context_window", "max_output_tokens", "exact", "source"]])

-- | Skills, handoff and assembly vectors: handoffs, conversations and
-- requests go in as written in the file (the @...Bytes@ calls).
runAgentVector :: (Value, Raw) -> IO Value
runAgentVector (v, raw) = orError $ case str (v .! "op") of
  "handoff_validate" -> handoffValidateBytes (input "handoff") >>= decodeOut
  "handoff_render" -> handoffRenderBytes (input "handoff") (inputMaybe "options") >>= decodeOut
  "handoff_filter" -> handoffFilterBytes (input "conversation") (inputMaybe "options") >>= decodeOut
  "skills_list" -> skills >>= skillsList
  "skills_body" -> skills >>= \s -> skillsBody s (str (i .! "name"))
  "skills_index" -> skills >>= \s -> skillsRenderIndex s (maybeV (i .! "index_options"))
  "assemble" -> assembleBytes (tok (str (i .! "encoding"))) (input "request") >>= decodeOut
  op -> fail ("unknown agent op " ++ T.unpack op)
  where
    i = v .! "input"
    input k = rawPath raw ["input", k]
    inputMaybe k = rawPathMaybe raw ["input", k]
    skills = openSkills (str (i .! "root")) (maybeV (i .! "options"))

-- | A classify vector's error context: its @agent_id@, @workflow_id@ and
-- @metadata@ fields, as given (an empty object when it has none).
errorContextOf :: Value -> Value
errorContextOf (Object o) = Object (KM.filterWithKey (\k _ -> k `elem` ["agent_id", "workflow_id", "metadata"]) o)
errorContextOf _ = object []

-- | Recovery vectors that map to one call each (classify, backoff, call
-- stacks, tool sets). Classification vectors list only the fields they pin.
runRecoveryVector :: Value -> IO (Maybe Value)
runRecoveryVector v = case str (v .! "op") of
  "classify" -> Just <$> orError (subsetOf (v .! "expected") <$>
    classifyErrorIn (str (i .! "provider")) (fromIntegral (int (i .! "status")))
      (str <$> maybeV (i .! "body")) (maybeV (i .! "headers")) (errorContextOf i))
  "backoff" -> Just <$> orError (backoff i)
  "callstack"
    | otherwise -> fmap Just $ orError $ do
      s0 <- newCallStack (int (i .! "max_depth"))
      s <- foldlM' (\s a -> callStackEnter s (str a)) s0 (arr (i .! "enter"))
      callStackToJson s
  -- The vectors hold a digest of the results (core/tests/vectors.rs):
  -- {"selected": [...]} and {"tool_count", "agents": {agent: tools}}.
  "toolset" -> fmap Just $ orError $ case i .! "select" of
    String agent -> (\sel -> object ["selected" .= sel]) <$> toolsetSelect (i .! "request") agent
    _ -> do
      r <- toolsetReport Nothing (i .! "request")
      pure $ object
        [ "tool_count" .= (r .! "tool_count")
        , "agents" .= Object (KM.fromList [(K.fromText (str (a .! "agent")), a .! "tools") | a <- arr (r .! "agents")]) ]
  "breaker" -> fmap Just $ orError $ do
    b <- newBreaker (maybeV (i .! "config"))
    rs <- forM (arr (i .! "ops")) $ \op -> case arr op of
      [String what, at] -> do
        let now = fromIntegral (int at)
            state = (.! "state") <$> breakerState b "k" now
        case what of
          "allow" -> Bool <$> breakerAllow b "k" now
          "success" -> breakerRecordSuccess b "k" now >>= sameAs state
          "failure" -> breakerRecordFailure b "k" now >>= sameAs state
          _ -> state
      _ -> fail "bad breaker op"
    pure (object ["results" .= rs])
  "trace" -> Just <$> orError (runTrace i)
  _ -> pure Nothing
  where
    i = v .! "input"
    -- The state a record call returns must be the one breakerState reads
    -- right after it (the vector's expectation is then checked on that).
    sameAs state returned = do
      st <- state
      unless (st == String (breakerStateName returned)) $
        fail ("record returned " ++ show returned ++ ", breakerState then says " ++ show st)
      pure st
    foldlM' f z xs = foldl (\acc x -> acc >>= \a -> f a x) (pure z) xs

-- | A trace vector: events through the tracer, then the digest that
-- core/tests/vectors.rs builds (per-tool metrics, recent records,
-- interrupted tool_call_ids, failing events).
runTrace :: Value -> IO Value
runTrace i = do
  t <- newTracer (maybeV (i .! "config"))
  ids <- newIORef (M.empty :: M.Map Int (Maybe Word64))
  interrupted <- newIORef []
  errs <- newIORef []
  let events = arr (i .! "events")
      w64 = fromIntegral . int
  forM_ (zip [0 :: Int ..] events) $ \(k, e) -> do
    r <- try $ case arr e of
      [String "start", String tool, info, inB, at] -> do
        started <- try (tracerStart t tool (maybeV info) (w64 inB) (w64 at))
        -- A failed start still takes a number, as in the core's runner.
        modifyIORef' ids (\m -> M.insert (M.size m + 1) (either (const Nothing) Just started) m)
        either (throwIO :: TurnfitError -> IO ()) (const (pure ())) started
      [String "end", n, String oc, outB, err, at] -> do
        m <- readIORef ids
        let sid = fromMaybe maxBound (M.findWithDefault Nothing (int n) m)
            outcome = case oc of
              "success" -> SpanSuccess
              "failed" -> SpanFailed
              "timeout" -> SpanTimeout
              _ -> SpanCancelled
        tracerEnd t sid outcome (w64 outB) (str <$> maybeV err) (w64 at)
      [String "expire", at] -> do
        od <- tracerExpire t (w64 at)
        modifyIORef' interrupted (++ [r .! "tool_call_id" | r <- arr (od .! "interrupted_results")])
      _ -> fail ("bad trace event " ++ show e)
    case r of
      Left ce -> modifyIORef' errs (++ [A.toJSON [A.toJSON k, errorValue ce .! "error"]])
      Right () -> pure ()
  ex <- tracerExport t 0
  let metrics m = KM.fromList $
        [(K.fromText f, m .! f) | f <- ["count", "successes", "errors", "timeouts", "cancelled", "in_flight"]]
          ++ [(K.fromText f, (m .! "duration_us") .! f) | m .! "duration_us" /= Null, f <- ["min", "max", "p50", "p95", "p99"]]
      tools = KM.fromList [(K.fromText (str (m .! "tool")), Object (metrics m)) | m <- arr (ex .! "tools")]
      recent = [A.toJSON [r .! "tool", r .! "outcome", r .! "count"] | r <- arr (ex .! "recent")]
  intr <- readIORef interrupted
  es <- readIORef errs
  pure (object ["tools" .= Object tools, "recent" .= recent, "interrupted" .= intr, "event_errors" .= es])

isError :: A.Result a -> Bool
isError (A.Error _) = True
isError _ = False

subsetOf :: Value -> Value -> Value
subsetOf (Object want) (Object got) = Object (KM.filterWithKey (\k _ -> KM.member k want) got)
subsetOf _ got = got

-- | Every vector of a file, compared with its expectation as written.
vectorSpecs :: String -> FilePath -> ((Value, Raw) -> IO (Maybe Value)) -> Spec
vectorSpecs title path run = describe title $ do
  vs <- runIO (loadVectors path)
  it ("has vectors in " ++ path) $ length vs `shouldSatisfy` (> 0)
  forM_ vs $ \vr@(v, _) -> do
    let name = T.unpack (str (v .! "name"))
    it name $ do
      got <- run vr
      case got of
        Nothing -> pendingWith "op not mapped to one binding call"
        Just g -> g `shouldBe` (v .! "expected")

-- ---------------------------------------------------------------------------
-- properties

newtype AnyText = AnyText Text deriving (Show)

instance Arbitrary AnyText where
  arbitrary = AnyText . T.pack <$> listOf' (frequency
    [ (6, elements (['a' .. 'z'] ++ " \n\t.,'\"0123456789<|>"))
    , (2, arbitraryUnicodeChar)
    , (1, elements "日本語한국어🙂👍🏽\x200d\xfeff\x2028é\x301")
    ])
    where listOf' g = sized $ \n -> choose (0, 4 * n) >>= \k -> vectorOf k g
  shrink (AnyText t) = AnyText . T.pack <$> shrink (T.unpack t)


-- | A random OpenAI-shape conversation: a system prompt, then turns of a user
-- message, an assistant message with 0-3 parallel tool calls, their results
-- (some calls left unanswered, some stray results), and an assistant reply.
-- Tool outputs range from a word to a few thousand tokens.
newtype AnyConversation = AnyConversation Value deriving (Show)

instance Arbitrary AnyConversation where
  arbitrary = do
    nTurns <- choose (1, 8 :: Int)
    turns <- forM [1 .. nTurns] $ \t -> do
      user <- sentence
      nCalls <- choose (0, 3 :: Int)
      let ids = [T.pack ("call_" <> show t <> "_" <> show c) | c <- [1 .. nCalls]]
      answered <- forM ids $ \i -> (,) i <$> frequency [(5, pure True), (1, pure False)]
      outputs <- forM answered $ \(i, ok) -> do
        size <- frequency [(4, choose (1, 40)), (1, choose (200, 3000 :: Int))]
        body <- T.unwords <$> vectorOf size (elements ["build", "ok", "error:", "src/lib.rs:42", "test", "passed", "failed", "0x1f"])
        pure [object ["role" .= ("tool" :: Text), "tool_call_id" .= i, "content" .= body] | ok]
      stray <- frequency [(6, pure []), (1, pure [object ["role" .= ("tool" :: Text), "tool_call_id" .= T.pack ("stray_" <> show t), "content" .= ("late" :: Text)]])]
      reply <- sentence
      let call i = object ["id" .= i, "type" .= ("function" :: Text), "function" .= object ["name" .= ("run" :: Text), "arguments" .= ("{}" :: Text)]]
          assistantCalls = [object ["role" .= ("assistant" :: Text), "content" .= Null, "tool_calls" .= map call ids] | nCalls > 0]
      pure $ [object ["role" .= ("user" :: Text), "content" .= user]] ++ assistantCalls ++ concat outputs ++ stray
        ++ [object ["role" .= ("assistant" :: Text), "content" .= reply]]
    let system = object ["role" .= ("system" :: Text), "content" .= ("You are a coding agent." :: Text)]
    pure . AnyConversation $ object ["model" .= ("gpt-4o" :: Text), "messages" .= (system : concat turns)]
    where
      sentence = T.unwords <$> (choose (1, 30) >>= \n -> vectorOf n (elements ["fix", "the", "parser", "test", "why", "does", "it", "fail", "run", "again", "src/main.rs", "cargo", "please"]))

-- ---------------------------------------------------------------------------

-- | Moves to the repository root (the folder with include/turnfit.h), so the
-- suite runs the same from cabal (package folder) or from the root.
toRoot :: IO ()
toRoot = getCurrentDirectory >>= go
  where
    go d = do
      here <- doesFileExist (d </> "include" </> "turnfit.h")
      if here
        then setCurrentDirectory d
        else
          let up = takeDirectory d
           in if up == d then fail "cannot find the repository root (include/turnfit.h)" else go up

main :: IO ()
main = toRoot >> hspec spec

spec :: Spec
spec = do
  describe "Turnfit.Raw" $ do
    it "is what gen_raw.py makes from include/turnfit.h (no drift)" $ do
      (code, out, err) <- readProcessWithExitCode "python3" ["bindings/haskell/gen_raw.py", "--check"] ""
      (code, err) `shouldBe` (ExitSuccess, "")
      out `shouldContain` "matches"
    it "loads a library of the header's ABI revision" $ abiVersion `shouldBe` headerAbiVersion
    it "reports invalid UTF-8 (2) and NULL with a length (1) at the raw level" $
      withTokenizerPtr cl100k $ \tp -> alloca $ \out -> alloca $ \errp -> do
        poke errp nullPtr
        rc <- BU.unsafeUseAsCStringLen "ab\xff" $ \(p, n) -> R.cTokenizerCount tp (castPtr p) (fromIntegral n) out errp
        rc `shouldBe` R.kStatusInvalidUtf8
        e <- peek errp
        e `shouldNotBe` nullPtr
        R.cErrorCode e `shouldReturn` R.kStatusInvalidUtf8
        msg <- R.cErrorMessage e nullPtr >>= peekCString
        msg `shouldContain` "offset 2"
        R.cErrorFree e
        rc2 <- R.cTokenizerCount tp nullPtr 5 out nullPtr
        rc2 `shouldBe` R.kStatusNullArgument
        rc3 <- R.cTokenizerCount tp nullPtr 0 out nullPtr
        rc3 `shouldBe` R.kStatusOk
        peek out `shouldReturn` 0
        statusName 999 `shouldBe` "TURNFIT_STATUS_UNRECOGNIZED"
    it "truncates with NULL counts and frees a result by its parts (ABI 2)" $
      withTokenizerPtr cl100k $ \tp -> alloca $ \sp -> do
        poke sp (R.TurnfitString nullPtr 0)
        rc <- BU.unsafeUseAsCStringLen "hello world, hello world" $ \(p, n) ->
          R.cTokenizerTruncate tp (castPtr p) (fromIntegral n) 2 R.kTruncateSideHead nullPtr 0 sp nullPtr nullPtr nullPtr
        rc `shouldBe` R.kStatusOk
        R.TurnfitString p n <- peek sp
        p `shouldNotBe` nullPtr
        B.packCStringLen (castPtr p, fromIntegral n) `shouldReturn` "hello world"
        R.cStringFreeParts (castPtr p) n
        -- An empty result still has a pointer (never NULL since ABI 2).
        poke sp (R.TurnfitString nullPtr 0)
        R.cTokenizerDecodeBytes tp nullPtr 0 sp nullPtr `shouldReturn` R.kStatusOk
        R.TurnfitString e en <- peek sp
        (e /= nullPtr, en) `shouldBe` (True, 0)
        R.cStringFreeParts (castPtr e) en
    it "follows the ABI 2 contract: depth 0 refused in both constructors, an empty marker is no marker" $ do
      defaultCallStackDepth `shouldBe` 5
      r0 <- try (newCallStack 0) :: IO (Either TurnfitError CallStack)
      either status (const 0) r0 `shouldBe` statusInvalidArgument
      r1 <- try (callStackFromJson (object ["agents" .= ([] :: [Text]), "max_depth" .= (0 :: Int)])) :: IO (Either TurnfitError CallStack)
      either status (const 0) r1 `shouldBe` statusInvalidArgument
      s <- newCallStack defaultCallStackDepth
      s5 <- foldM callStackEnter s ["a", "b", "c", "d", "e"]
      r2 <- try (callStackEnter s5 "f") :: IO (Either TurnfitError CallStack)
      either status (const 0) r2 `shouldBe` statusDepthExceeded
      let long = T.unwords (replicate 200 "word")
      none <- truncateTokens cl100k KeepBoth (Just "") 10 long
      truncatedText none `shouldBe` T.unwords (replicate 10 "word")
      truncatedTokens none `shouldBe` 10
      dflt <- truncateTokens cl100k KeepBoth Nothing 30 long
      truncatedText dflt `shouldSatisfy` T.isInfixOf "tokens truncated"
    it "reports the version" $ version `shouldBe` "0.1.0"
    it "names statuses" $ do
      statusName statusUnknownEncoding `shouldBe` "TURNFIT_STATUS_UNKNOWN_ENCODING"
      statusName statusOk `shouldBe` "TURNFIT_STATUS_OK"

  describe "tokenizer bytes and special sets (tiktoken's own test examples)" $ do
    it "adopts byte results without a copy; they outlive a GC, and GC frees them" $ do
      let text = T.replicate 50000 "abcdefgh, "
          expected = TE.encodeUtf8 text
          ids = encodeTokens cl100k text
      _ <- evaluate (sum ids)
      bs <- decodeBytes cl100k ids
      adopted bs `shouldBe` True
      adopted (B.copy bs) `shouldBe` False
      let rest = B.drop 10 bs
      performGC
      rest `shouldBe` B.drop 10 expected
      decodeBytes cl100k [] `shouldReturn` ""
      -- 400 results of 500 kB, each dropped at once: 200 MB if the
      -- finalizers never freed them.
      rss0 <- rssBytes
      forM_ [1 .. 400 :: Int] $ \k -> do
        r <- decodeBytes cl100k ids
        B.length r `shouldBe` B.length expected
        when (k `mod` 20 == 0) performGC
      performGC
      rss1 <- rssBytes
      (rss1 - rss0) `shouldSatisfy` (< 64 * 1024 * 1024)
    it "gives token bytes, looks tokens up by bytes, and refuses unknown ids" $ do
      tokenBytes cl100k 15339 `shouldReturn` "hello"
      tokenBytes cl100k 9468 `shouldReturn` B.pack [0xf0, 0x9f]
      decodeBytes cl100k [9468, 239, 235] `shouldReturn` B.pack [0xf0, 0x9f, 0x91, 0x8d]
      tokenId cl100k (B.pack [0xf0, 0x9f]) `shouldReturn` 9468
      tokenId cl100k "<|endoftext|>" `shouldReturn` 100257
      r <- try (tokenBytes cl100k 100256) :: IO (Either TurnfitError B.ByteString)
      either status (const 0) r `shouldBe` statusUnknownToken
      r2 <- try (tokenId cl100k "hello world") :: IO (Either TurnfitError Word32)
      either status (const 0) r2 `shouldBe` statusUnknownToken
    it "encodes bytes that are not UTF-8 as tiktoken's _encode_bytes" $ do
      encodeBytes cl100k (B.pack [0x20, 0xec, 0x8b, 0xa4, 0xed]) `shouldReturn` [62085]
      forM_ [0 .. 9] $ \i -> do
        let b = B.replicate i 0x80
        ids <- encodeBytes cl100k b
        decodeBytes cl100k ids `shouldReturn` b
    it "decodes with ignore and with character offsets" $ do
      decodeTokens cl100k Ignore [64, 9468, 65] `shouldReturn` "ab"
      decodeWithOffsets cl100k (encodeTokens cl100k "hello world") `shouldReturn` ("hello world", [0, 5])
      let cjk = "我非常渴望与人工智能一起工作"
      decodeWithOffsets cl100k (encodeTokens cl100k cjk)
        `shouldReturn` (cjk, [0, 1, 2, 3, 3, 4, 4, 5, 6, 7, 8, 8, 9, 10, 11, 12, 13])
      r <- try (decodeWithOffsets cl100k [64, 9468]) :: IO (Either TurnfitError (Text, [Int]))
      either status (const 0) r `shouldBe` statusInvalidUtf8
    it "allows and refuses special tokens by set" $ do
      let text = "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>"
          has ids = map (`elem` ids) [100257, 100258, 100259]
      r <- encodeSpecialE cl100k (OnlySpecial []) AllSpecial text
      either status (const 0) r `shouldBe` statusInvalidArgument
      has <$> encodeSpecial cl100k (OnlySpecial []) (OnlySpecial []) text `shouldReturn` [False, False, False]
      has <$> encodeSpecial cl100k AllSpecial AllSpecial text `shouldReturn` [True, True, True]
      has <$> encodeSpecial cl100k (OnlySpecial ["<|fim_prefix|>"]) (OnlySpecial []) text
        `shouldReturn` [False, True, False]
      sp <- specialTokens cl100k
      lookup "<|fim_middle|>" sp `shouldBe` Just 100259
      length sp `shouldBe` 5

  describe "tokenizer" $ do
    it "counts, encodes and decodes" $ do
      countTokens cl100k "hello world" `shouldBe` 2
      encodeTokens cl100k "hello world" `shouldBe` [15339, 1917]
      decodeTokens cl100k Strict [15339, 1917] `shouldReturn` "hello world"
    it "takes empty text and empty id lists" $ do
      countTokens cl100k "" `shouldBe` 0
      encodeTokens cl100k "" `shouldBe` []
      decodeTokens cl100k Strict [] `shouldReturn` ""
      countUntilLimit cl100k 0 "" `shouldReturn` (0, False)
    it "recognizes special tokens only when asked" $ do
      countTokens cl100k "<|endoftext|>" `shouldSatisfy` (> 1)
      countTokens (tokenizers M.! ("cl100k_base", Recognize)) "<|endoftext|>" `shouldBe` 1
    it "describes itself" $ do
      info <- tokenizerInfo cl100k
      info .! "encoding" `shouldBe` String "cl100k_base"
    it "makes tokenizers for models" $ do
      t <- newTokenizerForModel Nothing "gpt-4o" Nothing Ordinary
      info <- tokenizerInfo t
      info .! "encoding" `shouldBe` String "o200k_base"
    modifyMaxSuccess (const 300) $ do
      prop "decode . encode == id" $ \(AnyText t) ->
        ioProperty $ (=== t) <$> decodeTokens cl100k Strict (encodeTokens cl100k t)
      prop "countTokens == length . encode (o200k_base)" $ \(AnyText t) ->
        countTokens (tok "o200k_base") t === length (encodeTokens (tok "o200k_base") t)
      prop "truncate respects its limit, every side" $ \(AnyText t) (NonNegative m0) side ->
        ioProperty $ do
          let m = m0 `mod` 40
              s = [KeepHead, KeepTail, KeepBoth] !! (side `mod` 3 :: Int)
          r <- truncateTokensE cl100k s (Just "~") m t
          pure $ case r of
            Left e -> counterexample (show e) (s == KeepBoth && status e == statusInvalidArgument)
            Right tr -> conjoin
              [ property (truncatedTokens tr <= m)
              , countTokens cl100k (truncatedText tr) === truncatedTokens tr
              , property (s /= KeepHead || truncatedText tr `T.isPrefixOf` t)
              , property (s /= KeepTail || truncatedText tr `T.isSuffixOf` t) ]
      prop "countUntilLimit agrees with countTokens" $ \(AnyText t) (NonNegative l) ->
        ioProperty $ do
          (n, ex) <- countUntilLimit cl100k l t
          let full = countTokens cl100k t
          pure $ if full <= l then (n, ex) === (full, False) else property (ex && n > l)
    modifyMaxSuccess (const 200) $
      prop "fit keeps its invariants for every strategy and budget (random conversations)" $
        \(AnyConversation conv) (Positive b0) strategy ->
          ioProperty $ do
            let budget = 300 + (b0 `mod` 8000) :: Int
                s = ["recency", "relevance", "hybrid", "summarize"] !! (strategy `mod` 4 :: Int) :: Text
                opts = object ["model" .= ("gpt-4o" :: Text), "max_tokens" .= budget, "reserve_output" .= (0 :: Int),
                               "policy" .= object ["strategy" .= s]]
            r <- fitE conv opts
            case r of
              -- Only what must be kept (system, latest turn) can make it fail.
              Left e -> pure . label "does not fit" $ counterexample (show e) (status e == 11)
              Right (out, report) -> label "fitted" <$> do
                w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (1000000 :: Int), "reserved_output" .= (0 :: Int)]))
                windowLoad w out
                issues <- windowValidate w
                pure $ conjoin
                  [ counterexample ("over budget: " <> show report) (int (report .! "tokens_after") <= int (report .! "limit_tokens"))
                  , counterexample ("issues after fit: " <> show issues) (issues === Array mempty) ]

  describe "errors" $ do
    it "unknown encoding is UNKNOWN_ENCODING (6)" $ do
      r <- newTokenizerE "cl999k_base"
      either (Just . status) (const Nothing) r `shouldBe` Just 6
      either message (const "") r `shouldSatisfy` ("turnfit_tokenizer_new" `T.isPrefixOf`)
    it "throws TurnfitError from IO calls" $
      newTokenizer "nope" `shouldThrow` (\e -> status e == statusUnknownEncoding)
    it "malformed conversation is INVALID_JSON (4)" $ do
      w <- newWindow Nothing "gpt-4o" Nothing
      windowLoad w (Number 3) `shouldThrow` (\e -> status e == statusInvalidJson)
    it "bad fit options are INVALID_JSON (4)" $ do
      r <- fitE (A.toJSON [object ["role" .= ("user" :: Text), "content" .= ("hi" :: Text)]]) (object ["bogus" .= True])
      either (Just . status) (const Nothing) r `shouldBe` Just statusInvalidJson
    it "malformed JSON bytes are INVALID_JSON (4), with the location" $ do
      r <- try (fitBytes "[{\"role\": \"user\", " "{\"model\": \"gpt-4o\"}")
      either (Just . status) (const Nothing) r `shouldBe` Just statusInvalidJson
      w <- newWindow Nothing "gpt-4o" Nothing
      windowLoadBytes w "{not json" `shouldThrow` (\e -> status e == statusInvalidJson)
    it "fitBytes keeps the input as written (summary ids match the CLI's bytes path)" $ do
      conv <- B.readFile "examples/data/coding-session.json"
      let opts = "{\"model\": \"gpt-4o\", \"max_tokens\": 16000, \"policy\": {\"tool_output_max\": 2000}}"
      (c, rep) <- fitBytes conv opts
      Just repV <- pure (A.decodeStrict' rep)
      -- What `turnfit fit --model gpt-4o --max-tokens 16000 --tool-output-max
      -- 2000 --report R examples/data/coding-session.json` reports (and
      -- `turnfit preflight` counts) since issue 15's accounting rules.
      repV .! "tokens_before" `shouldBe` Number 51029
      Just convV <- pure (A.decodeStrict' conv)
      Just optsV <- pure (A.decodeStrict' opts)
      (c', rep') <- fit convV optsV
      A.decodeStrict' c `shouldBe` Just c'
      repV .! "tokens_after" `shouldBe` rep' .! "tokens_after"
    it "assembleBytes keeps key order (JSON section text renders as written; a Value sorts it)" $ do
      let req = "{\"budget\": 100, \"sections\": [{\"name\": \"s\", \"text\": {\"zeta\": 1, \"alpha\": 2}}]}"
      out <- assembleBytes cl100k req >>= decodeOut
      out .! "text" `shouldBe` String "## s\nzeta: 1\nalpha: 2"
      Just reqV <- pure (A.decodeStrict' req)
      viaValue <- assemble cl100k reqV
      viaValue .! "text" `shouldBe` String "## s\nalpha: 2\nzeta: 1"
    it "handoff ...Bytes keep custom fields in the order written, in and out" $ do
      let h = "{\"task_summary\": \"Fix it.\", \"key_outputs\": [], \"metadata\": {\"from_agent\": \"a\", \"to_agent\": \"b\", \"created_at\": \"2026-03-01T12:00:00Z\"}, \"custom_fields\": {\"zeta\": \"last letter\", \"alpha\": \"first letter\"}}"
          precedes x y t = B.length (fst (B.breakSubstring x t)) < B.length (fst (B.breakSubstring y t))
      norm <- handoffValidateBytes h
      norm `shouldSatisfy` precedes "\"zeta\"" "\"alpha\""
      full <- handoffRenderBytes h Nothing >>= decodeOut
      str (full .! "text") `shouldSatisfy` (\t -> T.length (fst (T.breakOn "zeta" t)) < T.length (fst (T.breakOn "alpha" t)))
      -- Under a budget with room for one field, the last one written goes.
      tight <- handoffRenderBytes h (Just (BL.toStrict (A.encode (object ["budget" .= (int (full .! "tokens") - 3)])))) >>= decodeOut
      tight .! "omitted_custom_fields" `shouldBe` A.toJSON ["alpha" :: Text]
      r <- newRegistry
      _ <- registryRegister r (A.toJSON [object ["name" .= ("my-model" :: Text), "encoding" .= ("cl100k_base" :: Text), "exact" .= True]])
      inReg <- handoffRenderInBytes (Just r) h (Just "{\"model\": \"my-model\"}") >>= decodeOut
      inReg .! "text" `shouldBe` full .! "text"
      filtered <- handoffFilterBytes "[{\"role\": \"user\", \"content\": \"hi\"}]" Nothing >>= decodeOut
      filtered `shouldSatisfy` (/= Null)
    it "the ...Bytes calls refuse bad bytes with the library's status, nothing thrown past it" $ do
      let bad = [("", statusInvalidJson), ("{\"budget\": ", statusInvalidJson), ("[1, 2]", statusInvalidJson), (B.pack [0x22, 0xff, 0xfe, 0x22], statusInvalidUtf8)]
      forM_ bad $ \(bs, st) -> do
        assembleBytes cl100k bs `shouldThrow` (\e -> status e == st)
        handoffValidateBytes bs `shouldThrow` (\e -> status e == st)
        handoffRenderBytes bs Nothing `shouldThrow` (\e -> status e == st)
        handoffFilterBytes bs Nothing `shouldThrow` (\e -> status e == st)
        w <- newWindow Nothing "gpt-4o" Nothing
        windowPushBytes w bs `shouldThrow` (\e -> status e == st)
      handoffRenderBytes "{}" (Just "{not json") `shouldThrow` (\e -> status e == statusInvalidJson)
      -- Deep nesting stops at the parser's recursion limit: LIMIT_EXCEEDED.
      let deep = B.concat (replicate 100000 "[") <> B.concat (replicate 100000 "]")
          deepRequest = "{\"budget\": 10, \"sections\": [{\"name\": \"s\", \"text\": " <> deep <> "}]}"
          tooDeep e = status e == statusLimitExceeded && "recursion limit" `T.isInfixOf` message e
      w <- newWindow Nothing "gpt-4o" Nothing
      assembleBytes cl100k deepRequest `shouldThrow` tooDeep
      handoffValidateBytes deep `shouldThrow` tooDeep
      handoffRenderBytes deep Nothing `shouldThrow` tooDeep
      handoffFilterBytes deep Nothing `shouldThrow` tooDeep
      windowPushBytes w deep `shouldThrow` tooDeep
    it "windowPushBytes counts like windowPush" $ do
      let msg = "{\"content\": \"hello there\", \"role\": \"user\"}"
      w1 <- newWindow Nothing "gpt-4o" Nothing
      w2 <- newWindow Nothing "gpt-4o" Nothing
      n1 <- windowPushBytes w1 msg
      Just msgV <- pure (A.decodeStrict' msg)
      n2 <- windowPush w2 msgV
      n1 `shouldBe` n2
      conv <- windowConversation w1
      conv `shouldBe` A.toJSON [msgV]
    it "unknown model is UNKNOWN_MODEL (7)" $
      newWindow Nothing "no-such-model-xyz" Nothing `shouldThrow` (\e -> status e == statusUnknownModel)
    it "unknown token is UNKNOWN_TOKEN (8)" $ do
      r <- decodeTokensE cl100k Replace [10000000]
      either (Just . status) (const Nothing) r `shouldBe` Just statusUnknownToken
    it "strict decode of a cut character is INVALID_UTF8 (2)" $ do
      r <- decodeTokensE cl100k Strict [9468]
      either (Just . status) (const Nothing) r `shouldBe` Just statusInvalidUtf8
      decodeTokens cl100k Replace [9468] `shouldReturn` "\xFFFD"
    it "a budget too small for the marker is INVALID_ARGUMENT (3)" $ do
      r <- truncateTokensE cl100k KeepBoth Nothing 1 (T.replicate 100 "word ")
      either (Just . status) (const Nothing) r `shouldBe` Just statusInvalidArgument
    it "a cycle is CYCLE_DETECTED (14) with the chain" $ do
      s <- newCallStack defaultCallStackDepth >>= (`callStackEnter` "planner") >>= (`callStackEnter` "coder")
      r <- callStackEnterE s "planner"
      either (Just . status) (const Nothing) r `shouldBe` Just statusCycleDetected
      either message (const "") r `shouldSatisfy` T.isInfixOf "planner -> coder -> planner"
    it "a full stack is DEPTH_EXCEEDED (15)" $ do
      s <- newCallStack 1 >>= (`callStackEnter` "a")
      callStackEnter s "b" `shouldThrow` (\e -> status e == statusDepthExceeded)
    it "an unsafe skill name is UNSAFE_PATH (13)" $ do
      s <- openSkills "examples/data/skills" Nothing
      skillsBody s "../etc" `shouldThrow` (\e -> status e `elem` [statusUnsafePath, statusInvalidArgument])
    it "pure countTokens stays pure on huge input only by throwing" $ do
      r <- try (evaluate (countTokens cl100k (T.replicate (65 * 1024 * 1024) "a")))
      either (Just . status) (const Nothing) r `shouldBe` Just statusLimitExceeded

  describe "window and compaction" $ do
    it "preflights, compacts with the summary protocol, and applies the summary" $ do
      w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (2000 :: Int), "reserved_output" .= (200 :: Int)]))
      let msg role c = object ["role" .= (role :: Text), "content" .= (c :: Text)]
          long k = T.unwords (replicate 60 ("turn" <> T.pack (show k)))
          conv = msg "system" "You are terse." : concat [[msg "user" (long k), msg "assistant" (long k)] | k <- [1 .. 12 :: Int]] ++ [msg "user" "and now?"]
      windowLoad w (A.toJSON conv)
      pre <- windowPreflight w Nothing
      pre .! "verdict" `shouldSatisfy` (`elem` [String "should_compact", String "overflow"])
      r <- windowCompact w (Just (object ["strategy" .= ("summarize" :: Text)]))
      r .! "status" `shouldBe` String "needs_summary"
      let req = r .! "request"
      str (req .! "prompt") `shouldSatisfy` (not . T.null)
      wrong <- try (windowApplySummary w "wrong-id" "x")
      either (Just . status) (const Nothing) (wrong :: Either TurnfitError Value) `shouldBe` Just statusInvalidArgument
      rep <- windowApplySummary w (str (req .! "id")) "The user asked about turns 1-12; all answered."
      rep .! "tokens_after" `shouldSatisfy` (\a -> int a < int (rep .! "tokens_before"))
      post <- windowPreflight w Nothing
      post .! "verdict" `shouldBe` String "fits"
      n <- windowPush w (msg "assistant" "ok")
      n `shouldSatisfy` (> 0)

  describe "multi-scale context (issue 53)" $ do
    it "folds a real trajectory on compact and reports each tier" $ do
      let tiers = object ["immediate_tokens" .= (1500 :: Int), "session_tokens" .= (300 :: Int), "historical_tokens" .= (400 :: Int)]
      w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (8000 :: Int), "reserved_output" .= (1000 :: Int), "multi_scale" .= tiers]))
      conv <- B.readFile "tests/fixtures/trajectories/tau-bench-airline-task0.openai.json"
      windowLoadBytes w conv
      r <- windowCompact w Nothing
      r .! "status" `shouldBe` String "done"
      let t = (r .! "report") .! "tiers"
      int (t .! "messages_folded") `shouldSatisfy` (> 0)
      int (t .! "immediate_tokens") `shouldSatisfy` (<= 1500)
      int (t .! "session_tokens") `shouldSatisfy` (<= 300)
      pre <- windowPreflight w Nothing
      pre .! "tiers" `shouldBe` t
    it "refuses a tier budget of zero, naming it" $ do
      let tiers = object ["immediate_tokens" .= (0 :: Int), "session_tokens" .= (300 :: Int), "historical_tokens" .= (400 :: Int)]
      r <- try (newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (8000 :: Int), "multi_scale" .= tiers])))
      case r of
        Left e -> do
          status e `shouldBe` statusInvalidArgument
          message e `shouldSatisfy` T.isInfixOf "multi_scale.immediate_tokens is 0"
        Right _ -> expectationFailure "a zero tier budget was accepted"

  describe "typed results and tool spans (issue 23)" $ do
    it "runs a tool under its deadline: ok, timed out, exception" $ do
      t <- newTracer Nothing
      r1 <- withToolSpan t "fast" (Just (object ["tool_call_id" .= ("c1" :: Text)])) defaultToolTimeoutUs (pure (42 :: Int))
      case r1 of
        ToolOk n -> n `shouldBe` 42
        other -> expectationFailure ("fast: " ++ show other)
      r2 <- withToolSpan t "slow" Nothing 20000 (threadDelay 2000000 >> pure (0 :: Int))
      case r2 of
        ToolTimedOut us -> us `shouldBe` 20000
        other -> expectationFailure ("slow: " ++ show other)
      r3 <- withToolSpan t "boom" Nothing defaultToolTimeoutUs (throwIO (userError "disk full") >> pure (0 :: Int))
      case r3 of
        ToolException e -> show e `shouldContain` "disk full"
        other -> expectationFailure ("boom: " ++ show other)
      ex <- tracerExport t 0
      let tool n = head [g | g <- arr (ex .! "tools"), g .! "tool" == String n]
      (tool "fast" .! "successes", tool "slow" .! "timeouts", tool "boom" .! "errors")
        `shouldBe` (Number 1, Number 1, Number 1)
      [r .! "error" | r <- arr (ex .! "recent"), r .! "tool" == String "slow"] `shouldBe` [String "deadline of 20 ms exceeded"]
      withToolSpan t "" Nothing 1000 (pure ()) `shouldThrow` (\e -> status e == statusInvalidArgument)
      u <- tracerStart t "llm" Nothing 0 0
      tracerEndWith t u SpanFailed (Just (object ["error_category" .= ("rate_limited" :: Text), "input_tokens" .= (900 :: Int)])) 10
      ex2 <- tracerExport t 20
      (tool' ex2 "llm" .! "input_tokens", ex2 .! "error_categories" .! "rate_limited") `shouldBe` (Number 900, Number 1)
    it "decodes preflight, fit report and classification into records" $ do
      let hello = Array (V.fromList [object ["role" .= ("user" :: Text), "content" .= ("hello there" :: Text)]])
      w <- newWindow Nothing "gpt-4o" Nothing
      windowLoad w hello
      p <- windowPreflightTyped w Nothing
      (preVerdict p, preExact p, preLimit p) `shouldBe` (Fits, True, 128000)
      f <- windowCalibrate w (fromIntegral (2 * prePromptTokens p))
      f `shouldBe` 2.0
      windowCalibrate w 0 `shouldThrow` (\e -> status e == statusInvalidArgument)
      (_, rep) <- fitTyped hello (object ["model" .= ("gpt-4o" :: Text), "max_tokens" .= (16000 :: Int)])
      (fitTokensAfter rep <= fitLimitTokens rep, fitInsufficient rep) `shouldBe` (True, False)
      c <- classifyErrorTyped "other" 0 (Just "Found AIMessages with tool_calls that do not have a corresponding ToolMessage. Here are the first few of those tool calls: [{'name': 'x', 'args': {}, 'id': 'call_7', 'type': 'tool_call'}]") Nothing
      (clsCategory c, clsAction c, clsToolCallIds c) `shouldBe` ("invalid_tool_history", "repair_history", ["call_7"])
      u <- classifyErrorTyped "other" 0 (Just "state store unavailable") Nothing
      (clsCategory u, clsRetryable u, clsRetryAfterMs u) `shouldBe` ("state", False, Nothing)
      n <- classifyErrorIn "other" 0 (Just "Rate limit exceeded") Nothing
        (object ["agent_id" .= ("narrator" :: Text), "workflow_id" .= ("wf-7" :: Text), "metadata" .= object ["turn" .= (3 :: Int)]])
        >>= decodeTyped "classification"
      (clsCategory n, clsAgentId n, clsWorkflowId n, clsMetadata n)
        `shouldBe` ("rate_limited", Just "narrator", Just "wf-7", Just (object ["turn" .= (3 :: Int)]))
      (clsAgentId u, clsWorkflowId u, clsMetadata u) `shouldBe` (Nothing, Nothing, Nothing)
      classifyErrorIn "openai" 500 Nothing Nothing (object ["agent_id" .= ("" :: Text)])
        `shouldThrow` (\e -> status e == statusInvalidArgument)
      b <- newBreaker (Just (object ["failure_threshold" .= (3 :: Int)]))
      _ <- breakerRecordFailureIn b "openai" (object ["agent_id" .= ("narrator" :: Text), "workflow_id" .= ("wf-7" :: Text)]) 0
      _ <- breakerRecordFailureIn b "openai" (object ["agent_id" .= ("narrator" :: Text)]) 1
      s3 <- breakerRecordFailureIn b "openai" (object []) 2
      s3 `shouldBe` BreakerOpen
      breakerFailureCounts b >>= (`shouldBe` object
        [ "by_agent" .= object ["narrator" .= (2 :: Int)], "by_workflow" .= object ["wf-7" .= (1 :: Int)]
        , "unattributed" .= (0 :: Int) ])
      breakerRecordFailureIn b "openai" (object ["agent" .= ("x" :: Text)]) 3
        `shouldThrow` (\e -> status e == statusInvalidJson)
      (decodeTyped "preflight" (object []) :: IO Preflight) `shouldThrow` (\e -> status e == statusInvalidJson)
      (decodeTyped "classification" (String "x") :: IO Classification) `shouldThrow` (\e -> status e == statusInvalidJson)
    it "renders typed fit options to the options JSON, leaving unset fields to the library" $ do
      fitOptionsJson (fitOptions "gpt-4o") `shouldBe` object ["model" .= ("gpt-4o" :: Text)]
      let full = (fitOptions "gpt-4o")
            { foMaxTokens = Just 14000, foReserveOutput = Just 0, foFormat = Just "openai"
            , foTargetRatio = Just 0.5, foTriggerRatio = Just 0.8, foStrategy = Just Summarize
            , foTargetTokens = Just 7000, foKeepFirst = Just 1, foKeepLastRounds = Just 2, foKeepLastTurns = Just 0
            , foKeepLastMessages = Just 10, foPinned = [3], foMask = Just False, foMaskKeepLast = Just 4
            , foToolOutputMax = Just 2000, foToolOutputMaxBytes = Just 10000, foSummaryMaxTokens = Just 400
            , foSummaryRole = Just SummarySystem, foSummaryLabel = Just "[Previous conversation summary]" }
      fitOptionsJson full `shouldBe` object
        [ "model" .= ("gpt-4o" :: Text), "max_tokens" .= (14000 :: Int), "reserve_output" .= (0 :: Int)
        , "format" .= ("openai" :: Text), "target_ratio" .= (0.5 :: Double), "trigger_ratio" .= (0.8 :: Double)
        , "policy" .= object
            [ "strategy" .= ("summarize" :: Text), "target_tokens" .= (7000 :: Int), "keep_first" .= (1 :: Int)
            , "keep_last_rounds" .= (2 :: Int), "keep_last_turns" .= (0 :: Int), "keep_last_messages" .= (10 :: Int)
            , "pinned" .= [3 :: Int], "mask" .= object ["enabled" .= False, "keep_last" .= (4 :: Int)]
            , "tool_output_max" .= (2000 :: Int), "tool_output_max_bytes" .= (10000 :: Int)
            , "summary_max_tokens" .= (400 :: Int), "summary_role" .= ("system" :: Text)
            , "summary_label" .= ("[Previous conversation summary]" :: Text) ] ]
      map (\x -> A.toJSON x) [minBound .. maxBound :: FitStrategy]
        `shouldBe` map String ["recency", "relevance", "hybrid", "summarize"]
    it "fits with typed options: the 10 KB byte cap, summary role and label, refusals" $ do
      let rows = T.concat [T.pack ("row " ++ show i ++ ": caf\233 \20013\25991\n") | i <- [0 .. 999 :: Int]]
          call = object ["id" .= ("c1" :: Text), "type" .= ("function" :: Text), "function" .= object ["name" .= ("list_prs" :: Text), "arguments" .= ("{}" :: Text)]]
          conv = object ["messages" .= [ object ["role" .= ("system" :: Text), "content" .= ("You are a supervisor." :: Text)]
                                       , object ["role" .= ("user" :: Text), "content" .= ("show all PRs" :: Text)]
                                       , object ["role" .= ("assistant" :: Text), "content" .= Null, "tool_calls" .= [call]]
                                       , object ["role" .= ("tool" :: Text), "tool_call_id" .= ("c1" :: Text), "content" .= rows] ]]
      (out, rep) <- fitWith conv ((fitOptions "gpt-4o") { foToolOutputMaxBytes = Just 10000 })
      let cut = case arr (out .! "messages") !! 3 .! "content" of
            String t -> t
            other -> error (show other)
      (B.length (TE.encodeUtf8 cut) <= 10000, B.length (TE.encodeUtf8 rows) > 10000) `shouldBe` (True, True)
      ("row 0: caf" `T.isPrefixOf` cut, "row 999: caf\233 \20013\25991\n" `T.isSuffixOf` cut, " bytes truncated ...]" `T.isInfixOf` cut)
        `shouldBe` (True, True, True)
      [c .! "action" | c <- fitChanges rep] `shouldBe` [String "truncated_result"]
      (_, same) <- fitWith conv ((fitOptions "gpt-4o") { foToolOutputMaxBytes = Just 50000 })
      fitChanges same `shouldBe` []
      fitWith conv ((fitOptions "gpt-4o") { foToolOutputMaxBytes = Just 12 })
        `shouldThrow` (\e -> status e == statusInvalidArgument && "tool_output_max_bytes 12" `T.isInfixOf` message e)
      fitWith conv ((fitOptions "gpt-4o") { foTargetRatio = Just 1.5 }) `shouldThrow` (\e -> status e == statusInvalidArgument)
      let opts = (fitOptions "gpt-4o")
            { foMaxTokens = Just 3000, foReserveOutput = Just 0, foStrategy = Just Summarize, foTriggerRatio = Just 0.8
            , foTargetRatio = Just 0.5, foMask = Just False, foSummaryRole = Just SummarySystem
            , foSummaryLabel = Just "[Previous conversation summary]", foKeepLastMessages = Just 2 }
          turn i = [ object ["role" .= ("user" :: Text), "content" .= T.pack ("question " ++ show i ++ " " ++ concat (replicate 60 "about the parser "))]
                   , object ["role" .= ("assistant" :: Text), "content" .= T.pack ("answer " ++ show i ++ " " ++ concat (replicate 60 "the parser is fine "))] ]
          long = object ["messages" .= (object ["role" .= ("system" :: Text), "content" .= ("You are a coding agent." :: Text)] : concatMap turn [1 .. 12 :: Int])]
      (small, r2) <- fitWith long opts
      (fitStrategy r2, fitTokensAfter r2 <= 1500) `shouldBe` ("summarize", True)
      let summaries = [m | m <- arr (small .! "messages"), m .! "role" == String "system", String t <- [m .! "content"], "[Previous conversation summary]" `T.isInfixOf` t]
      length summaries `shouldBe` 1
    it "backs off 1, 2, 4 s with jitter none" $ do
      let req n = object ["failed_attempts" .= (n :: Int), "policy" .= object ["base_ms" .= (1000 :: Int), "cap_ms" .= (60000 :: Int), "max_attempts" .= (4 :: Int), "jitter" .= ("none" :: Text)]]
      ds <- mapM (\n -> (.! "delay_ms") <$> backoff (req n)) [1, 2, 3]
      ds `shouldBe` [Number 1000, Number 2000, Number 4000]
      g <- backoff (req 4)
      g .! "decision" `shouldBe` String "give_up"

  describe "tracer, breaker, assembly" $ do
    it "records spans and exports metrics" $ do
      t <- newTracer Nothing
      sid <- tracerStart t "grep" (Just (object ["tool_call_id" .= ("c1" :: Text)])) 10 1000
      tracerEnd t sid SpanSuccess 20 Nothing 3500
      ex <- tracerExport t 4000
      [g .! "count" | g <- arr (ex .! "tools"), g .! "tool" == String "grep"] `shouldBe` [Number 1]
      tracerEnd t sid SpanSuccess 0 Nothing 4000 `shouldThrow` (\e -> status e == statusInvalidArgument)
      s2 <- tracerStart t "slow" (Just (object ["timeout_ms" .= (1 :: Int), "tool_call_id" .= ("c2" :: Text)])) 0 0
      od <- tracerExpire t 5000000
      arr (od .! "overdue") `shouldSatisfy` ((== 1) . length)
      tracerEnd t s2 SpanFailed 0 (Just "late") 5000001 `shouldThrow` (\e -> status e == statusInvalidArgument)
      now <- clockNowUs
      now `shouldSatisfy` (> 1600000000000000)
    it "opens a breaker after failures" $ do
      b <- newBreaker (Just (object ["failure_threshold" .= (2 :: Int), "cool_down_ms" .= (1000 :: Int)]))
      breakerAllow b "openai" 0 `shouldReturn` True
      breakerRecordFailure b "openai" 1 `shouldReturn` BreakerClosed
      breakerRecordFailure b "openai" 2 `shouldReturn` BreakerOpen
      breakerAllow b "openai" 3 `shouldReturn` False
      st <- breakerState b "openai" 4
      st .! "state" `shouldBe` String "open"
      breakerRecordSuccess b "other" 5 `shouldReturn` BreakerClosed
    it "returns the state after each record, as breakerState then reads it (closed, open, half_open)" $ do
      b <- newBreaker (Just (object ["failure_threshold" .= (2 :: Int), "cool_down_ms" .= (1000 :: Int), "success_threshold" .= (2 :: Int)]))
      let recordAt rec at expected = do
            got <- rec b "api" at
            got `shouldBe` expected
            st <- breakerState b "api" at
            st .! "state" `shouldBe` String (breakerStateName got)
      recordAt breakerRecordFailure 1 BreakerClosed
      recordAt breakerRecordFailure 2 BreakerOpen
      -- After the cool-down one probe may go; its failure opens it again.
      breakerAllow b "api" 1002 `shouldReturn` True
      recordAt breakerRecordFailure 1003 BreakerOpen
      breakerAllow b "api" 1500 `shouldReturn` False
      -- Two successful probes (success_threshold 2) close it.
      breakerAllow b "api" 2003 `shouldReturn` True
      recordAt breakerRecordSuccess 2004 BreakerHalfOpen
      breakerAllow b "api" 2005 `shouldReturn` True
      recordAt breakerRecordSuccess 2006 BreakerClosed
      breakerAllow b "api" 2007 `shouldReturn` True
      r <- try (breakerRecordSuccess b "" 1) :: IO (Either TurnfitError BreakerState)
      either status (const 0) r `shouldBe` statusInvalidArgument
      map breakerStateName [minBound .. maxBound] `shouldBe` ["closed", "open", "half_open"]
    it "registers models and assembles prompts" $ do
      r <- newRegistry
      n <- registryRegister r (A.toJSON [object ["name" .= ("my-model" :: Text), "encoding" .= ("cl100k_base" :: Text), "exact" .= True, "context_window" .= (8192 :: Int)]])
      n `shouldBe` 1
      l <- registryLookup (Just r) "my-model" Nothing
      l .! "encoding" `shouldBe` String "cl100k_base"
      lst <- registryList (Just r)
      lst `shouldSatisfy` (/= Null)
      a <- assemble cl100k (object ["template" .= ("general" :: Text), "budget" .= (100 :: Int), "sections" .= [object ["name" .= ("sys" :: Text), "text" .= ("You are terse." :: Text)]]])
      a `shouldSatisfy` (/= Null)
    it "counts skills and handoffs with a model registered on a registry" $ do
      r <- newRegistry
      _ <- registryRegister r (A.toJSON [object ["name" .= ("my-model" :: Text), "encoding" .= ("cl100k_base" :: Text), "exact" .= True]])
      let opts = Just (object ["model" .= ("my-model" :: Text)])
          h = object ["task_summary" .= ("Fix it." :: Text), "key_outputs" .= ([] :: [Value]),
                      "metadata" .= object ["from_agent" .= ("a" :: Text), "to_agent" .= ("b" :: Text), "created_at" .= ("2026-03-01T12:00:00Z" :: Text)]]
      out <- handoffRenderIn (Just r) h opts
      out .! "tokens" `shouldSatisfy` (/= Null)
      handoffRenderIn Nothing h opts `shouldThrow` (\e -> status e == statusUnknownModel)
      s <- openSkillsIn (Just r) "examples/data/skills" opts
      l <- skillsList s
      l `shouldSatisfy` (/= Null)
      openSkills "examples/data/skills" opts `shouldThrow` (\e -> status e == statusUnknownModel)

  describe "events (issue 14, issue 23 logging handlers)" $ do
    let record = do
          ref <- newIORef []
          pure (ref, \e -> modifyIORef' ref (e :))
        seen ref = reverse <$> readIORef ref
    it "delivers budget_crossed and repaired; a handler may call back into the window" $ do
      w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (1000 :: Int), "reserved_output" .= (100 :: Int)]))
      (ref, h) <- record
      nested <- newIORef (0 :: Int)
      onWindowEvents w (Just (\e -> h e >> windowPreflight w Nothing >> modifyIORef' nested (+ 1)))
      let user k = object ["role" .= ("user" :: Text), "content" .= T.unwords (replicate k "word")]
      _ <- windowPush w (user 100)
      seen ref `shouldReturn` []
      _ <- windowPush w (user 650)
      es <- seen ref
      map eventKind es `shouldBe` ["budget_crossed"]
      map (\e -> eventPayload e .! "to") es `shouldBe` [String "should_compact"]
      readIORef nested `shouldReturn` 1
      let call = object ["id" .= ("a" :: Text), "type" .= ("function" :: Text), "function" .= object ["name" .= ("f" :: Text), "arguments" .= ("{}" :: Text)]]
      windowLoad w (A.toJSON [user 5, object ["role" .= ("assistant" :: Text), "content" .= Null, "tool_calls" .= [call]], user 3])
      _ <- windowRepair w Nothing
      es2 <- seen ref
      [eventPayload e .! "results_added" | e <- es2, eventKind e == "repaired"] `shouldBe` [Number 1]
      onWindowEvents w Nothing
      _ <- windowPush w (user 900)
      length <$> seen ref `shouldReturn` length es2
    it "delivers breaker and tracer events, and a throwing handler does not break the call" $ do
      b <- newBreaker (Just (object ["failure_threshold" .= (1 :: Int)]))
      (ref, h) <- record
      onBreakerEvents b (Just h)
      breakerRecordFailure b "api" 5 `shouldReturn` BreakerOpen
      es <- seen ref
      map eventPayload es `shouldBe` [object ["kind" .= ("breaker_state_changed" :: Text), "key" .= ("api" :: Text), "from" .= ("closed" :: Text), "to" .= ("open" :: Text), "at_ms" .= (5 :: Int)]]
      onBreakerEvents b (Just (\_ -> throwIO (userError "handler failed")))
      _ <- breakerRecordSuccess b "api" 100000
      breakerAllow b "other" 0 `shouldReturn` True
      t <- newTracer Nothing
      onTracerEvents t (Just h)
      forM_ [0, 10 :: Word64] $ \at -> do
        sid <- tracerStart t "grep" (Just (object ["input" .= ("same" :: Text)])) 0 at
        tracerEnd t sid SpanSuccess 0 Nothing (at + 1)
      _ <- tracerStart t "slow" (Just (object ["timeout_ms" .= (1 :: Int)])) 0 0
      _ <- tracerOverdue t 5000
      es2 <- drop 1 <$> seen ref
      map eventKind es2 `shouldBe` ["span_repeated", "span_overdue"]
      eventPayload (head es2) .! "count" `shouldBe` Number 2
    it "logging handlers: withFileHandler writes one JSON object per event, handlers combine with <>" $ do
      tmp <- getTemporaryDirectory
      let path = tmp </> "turnfit-spec-events.jsonl"
      exists <- doesFileExist path
      when exists (removeFile path)
      (ref, h) <- record
      b <- newBreaker (Just (object ["failure_threshold" .= (1 :: Int)]))
      L.withFileHandler path $ \fh -> do
        onBreakerEvents b (Just (fh <> h))
        breakerRecordFailure b "api" 5 `shouldReturn` BreakerOpen
        breakerRecordFailure b "db" 6 `shouldReturn` BreakerOpen
        onBreakerEvents b Nothing
      es <- seen ref
      length es `shouldBe` 2
      ls <- filter (not . B.null) . BC.lines <$> B.readFile path
      map A.decodeStrict' ls `shouldBe` map (Just . eventPayload) es
      map L.renderEvent es `shouldBe` ls
      removeFile path
    it "reports skipped skill entries while opening, and frees every callback" $ do
      (ref, h) <- record
      sk <- openSkillsWithEvents "examples/data" Nothing h
      es <- seen ref
      es `shouldSatisfy` (not . null)
      map eventKind es `shouldSatisfy` all (== "skill_skipped")
      lst <- skillsList sk
      map eventPayload es `shouldBe` [Object (KM.insert "kind" (String "skill_skipped") o) | Object o <- arr (lst .! "ignored")]
      -- Handlers set and replaced on short-lived handles are all released
      -- with them (the finalizers run; nothing is called afterwards).
      forM_ [1 .. 200 :: Int] $ \_ -> do
        w <- newWindow Nothing "gpt-4o" Nothing
        onWindowEvents w (Just h)
        onWindowEvents w (Just h)
      performGC
      threadDelay 10000
      length <$> seen ref `shouldReturn` length es

  describe "threads" $ do
    it "shares one tokenizer between 16 threads (results match the sequential ones)" $ do
      let texts = [T.replicate (1 + k `mod` 7) ("thread text " <> T.pack (show k) <> " 日本語 🙂 ") | k <- [1 .. 200 :: Int]]
          expected = map (countTokens cl100k) texts
      _ <- evaluate (sum expected)
      bad <- newIORef (0 :: Int)
      dones <- replicateM 16 newEmptyMVar
      forM_ (zip [0 :: Int ..] dones) $ \(j, done) -> forkIO $ do
        let mine = drop j texts ++ take j texts
            want = drop j expected ++ take j expected
        got <- forM mine (countTokensIO cl100k)
        ids <- forM (take 20 mine) (encodeTokensIO cl100k)
        putMVar done (got == want && map length ids == take 20 want)
      oks <- mapM takeMVar dones
      when (not (and oks)) $ modifyIORef' bad (+ 1)
      readIORef bad `shouldReturn` 0
      and oks `shouldBe` True
    it "serializes pushes from 8 threads on one window" $ do
      w <- newWindow Nothing "gpt-4o" Nothing
      windowLoad w (A.toJSON [object ["role" .= ("system" :: Text), "content" .= ("s" :: Text)]])
      dones <- replicateM 8 newEmptyMVar
      forM_ (zip [1 :: Int ..] dones) $ \(j, done) -> forkIO $ do
        r <- try $ forM_ [1 .. 50 :: Int] $ \k ->
          windowPush w (object ["role" .= ("user" :: Text), "content" .= T.pack ("thread " ++ show j ++ " message " ++ show k)])
        putMVar done (either (\e -> Just (e :: TurnfitError)) (const Nothing) r)
      errs <- mapM takeMVar dones
      errs `shouldBe` replicate 8 Nothing
      conv <- windowConversation w
      length (arr conv) `shouldBe` 401
    it "frees handles through finalizers while other threads use new ones" $ do
      dones <- replicateM 4 newEmptyMVar
      forM_ dones $ \done -> forkIO $ do
        ns <- forM [1 .. 50 :: Int] $ \k -> do
          s <- newCallStack defaultCallStackDepth >>= (`callStackEnter` T.pack ("agent" ++ show k))
          j <- callStackToJson s
          t <- newTokenizer (if even k then "cl100k_base" else "r50k_base")
          n <- countTokensIO t "hello world"
          when (k `mod` 10 == 0) performGC
          pure (n, j .! "depth")
        putMVar done (all (== (2, Number 1)) ns)
      oks <- mapM takeMVar dones
      performGC
      oks `shouldBe` replicate 4 True

  describe "fitTurn (issue 31): the host's summarizer as an IO action" $ do
    let load = do
          bs <- B.readFile "examples/data/agent-loop.json"
          either fail pure (A.eitherDecodeStrict' bs) :: IO Value
        opts = object
          [ "model" .= ("gpt-4o" :: Text), "max_tokens" .= (16000 :: Int)
          , "policy" .= object ["strategy" .= ("summarize" :: Text), "mask" .= object ["enabled" .= False]]
          , "summarizer" .= object ["timeout_ms" .= (200 :: Int)] ]
        field k (Object o) = KM.lookup (K.fromText k) o
        field _ _ = Nothing
        path ks v = foldM (\x k -> field k x) v ks
        num ks v = case path ks v of Just (Number n) -> toBoundedInteger n :: Maybe Int; _ -> Nothing
        strAt ks v = case path ks v of Just (String t) -> Just t; _ -> Nothing
        -- The turn fits and was summarized; returns (source, fallback reason).
        turn f = do
          h <- load
          r <- fitTurn h opts f
          case r of
            Left e -> expectationFailure (show e) >> pure (Nothing, Nothing)
            Right (_conv, rep) -> do
              let tokensAfter = num ["tokens_after"] rep
                  limit = num ["limit_tokens"] rep
              (tokensAfter <= limit && tokensAfter /= Nothing) `shouldBe` True
              path ["fired"] rep `shouldBe` Just (Bool True)
              pure (strAt ["summary", "source"] rep, strAt ["summary", "fallback", "reason"] rep)
    it "a summarizer that succeeds writes the summary (source host)" $ do
      calls <- newIORef (0 :: Int)
      r <- turn $ \req -> do
        modifyIORef' calls (+ 1)
        num ["prompt_tokens"] req <= num ["max_prompt_tokens"] req `shouldBe` True
        pure "The agent explored the repository."
      r `shouldBe` (Just "host", Nothing)
      n <- readIORef calls
      (n >= 1) `shouldBe` True
    it "a summarizer that throws: the digest stands in (error)" $ do
      r <- turn $ \_ -> throwIO (userError "rate limited")
      r `shouldBe` (Just "digest", Just "error")
    it "an exception hidden in a lazy result is caught too (error)" $ do
      r <- turn $ \_ -> pure (T.pack (error "lazy failure"))
      r `shouldBe` (Just "digest", Just "error")
    it "a summarizer that hangs past timeout_ms is abandoned (timeout)" $ do
      r <- turn $ \_ -> threadDelay 5000000 >> pure "too late"
      r `shouldBe` (Just "digest", Just "timeout")
    it "blank text and far too much text: the digest stands in (empty, oversized)" $ do
      turn (\_ -> pure "  \n ") >>= (`shouldBe` (Just "digest", Just "empty"))
      turn (\_ -> pure (T.replicate 200000 "word ")) >>= (`shouldBe` (Just "digest", Just "oversized"))
    it "turnfit's own errors are Left (unknown model, does not fit)" $ do
      h <- load
      Left e <- fitTurn h (object ["model" .= ("gtp-4o" :: Text), "max_tokens" .= (16000 :: Int)]) (\_ -> pure "x")
      status e `shouldBe` statusUnknownModel
      Left e2 <- fitTurn h (object ["model" .= ("gpt-4o" :: Text), "max_tokens" .= (50 :: Int)]) (\_ -> pure "x")
      status e2 `shouldBe` statusDoesNotFit
    let wopts = object
          [ "policy" .= object ["strategy" .= ("summarize" :: Text), "mask" .= object ["enabled" .= False]]
          , "summarizer" .= object ["timeout_ms" .= (2000 :: Int)] ]
        msgs v = case path ["messages"] v of Just (Array a) -> length a; _ -> -1
        loaded = do
          w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (16000 :: Int)]))
          load >>= windowLoad w
          pure w
    it "windowFitTurn: below the trigger nothing changes and the summarizer is not called" $ do
      w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (16000 :: Int)]))
      _ <- windowPush w (object ["role" .= ("user" :: Text), "content" .= ("hi" :: Text)])
      before <- windowConversation w
      Right rep <- windowFitTurn w wopts (\_ -> fail "no summary is needed")
      path ["fired"] rep `shouldBe` Just (Bool False)
      windowConversation w >>= (`shouldBe` before)
    it "windowFitTurn: over the trigger the window takes the host's summary" $ do
      w <- loaded
      n <- msgs <$> windowConversation w
      Right rep <- windowFitTurn w wopts (\_ -> pure "The agent read the failing tests.")
      strAt ["summary", "source"] rep `shouldBe` Just "host"
      (num ["tokens_after"] rep <= num ["limit_tokens"] rep) `shouldBe` True
      after <- windowConversation w
      (msgs after < n) `shouldBe` True
    it "windowFitTurn: a window changed while the summarizer ran gets nothing applied" $ do
      w <- loaded
      n <- msgs <$> windowConversation w
      pushed <- newIORef False
      Left e <- windowFitTurn w wopts $ \_ -> do
        done <- readIORef pushed
        unless done $ void (windowPush w (object ["role" .= ("user" :: Text), "content" .= ("one more thing" :: Text)]))
        writeIORef pushed True
        pure "summary"
      status e `shouldBe` statusInvalidArgument
      ("the window changed during the turn" `T.isInfixOf` message e) `shouldBe` True
      (msgs <$> windowConversation w) >>= (`shouldBe` (n + 1))
    it "windowFitTurn: options the window holds are refused" $ do
      w <- loaded
      Left e <- windowFitTurn w (object ["max_tokens" .= (100 :: Int)]) (\_ -> pure "x")
      status e `shouldBe` statusInvalidArgument

  describe "HandoffObject (seed document 004)" $ do
    let design = H.HandoffObject
          { H.taskSummary = "Collect the failing tests and hand them to the fixer."
          , H.keyOutputs = ["tests/parser.rs::threads fails 1 in 20", H.KeyOutputLabeled "src/parser.rs" "the buffer is shared"]
          , H.metadata = H.HandoffMetadata "collector" "fixer" "2026-03-01T12:00:00Z" Nothing (KM.fromList [("attempt", Number 2)])
          , H.customFields = KM.fromList [("ticket", String "BUG-77")]
          }
    it "writes the design's camelCase JSON and reads it back" $ do
      let v = A.toJSON design
      v .! "taskSummary" `shouldBe` String "Collect the failing tests and hand them to the fixer."
      (v .! "metadata") .! "fromAgent" `shouldBe` String "collector"
      A.fromJSON v `shouldBe` A.Success design
    it "is valid to the core as written (no version) and comes back typed" $ do
      back <- H.validateHandoffObject design
      back `shouldBe` design
      norm <- handoffValidate (A.toJSON design)
      norm .! "version" `shouldBe` String "1.0"
      A.fromJSON norm `shouldBe` A.Success design
    it "renders under a budget, custom fields first" $ do
      full <- H.handoffPromptText Nothing design
      full `shouldSatisfy` T.isInfixOf "BUG-77"
      r <- handoffRender (A.toJSON design) (Just (object ["budget" .= (countTokens cl100k full - 5)]))
      r .! "omitted_custom_fields" `shouldBe` A.toJSON ["ticket" :: Text]
      r .! "omitted" `shouldBe` A.toJSON ([] :: [Int])
    it "refuses one field under both spellings, and a bad date, with the core's message" $ do
      Left e <- (try (handoffValidate (case A.toJSON design of
        Object o -> Object (KM.insert "task_summary" (String "x") o)
        v -> v)) :: IO (Either TurnfitError Value))
      status e `shouldBe` statusInvalidJson
      message e `shouldSatisfy` T.isInfixOf "two spellings of one field"
      let bad = design { H.metadata = (H.metadata design) { H.createdAt = "yesterday" } }
      Left e2 <- (try (H.validateHandoffObject bad) :: IO (Either TurnfitError H.HandoffObject))
      message e2 `shouldSatisfy` T.isInfixOf "created_at"
    it "rejects JSON that is not a handoff when decoding" $
      (A.fromJSON (object ["taskSummary" .= (1 :: Int)]) :: A.Result H.HandoffObject) `shouldSatisfy` isError

  describe "issue 34 (seed document 004): logging, typed records, one-shot counts, prompt text" $ do
    let design = H.HandoffObject
          { H.taskSummary = "Collect the failing tests and hand them to the fixer."
          , H.keyOutputs = ["tests/parser.rs::threads fails 1 in 20", H.KeyOutputLabeled "src/parser.rs" "the buffer is shared"]
          , H.metadata = H.HandoffMetadata "collector" "fixer" "2026-03-01T12:00:00Z" Nothing KM.empty
          , H.customFields = KM.empty
          }
    it "counts a text for a model name in one call (countTokensForModel)" $ do
      n <- countTokensForModel "gpt-4o" "hello world, how are you?"
      o200 <- newTokenizer "o200k_base"
      n `shouldBe` countTokens o200 "hello world, how are you?"
      c <- countTokensForModel "gpt-4" "hello world, how are you?"
      c `shouldBe` countTokens cl100k "hello world, how are you?"
      Left e <- (try (countTokensForModel "no-such-model-xyz" "x") :: IO (Either TurnfitError Int))
      status e `shouldBe` statusUnknownModel
    it "counts a window's text with the host's own counter (registryRegisterCounter), and reports its failures" $ do
      let profile = object ["name" .= ("house-llm" :: Text), "encoding" .= ("o200k_base" :: Text), "context_window" .= (8000 :: Int), "exact" .= False]
          conv = A.toJSON [ object ["role" .= ("system" :: Text), "content" .= ("Be brief and answer in one sentence." :: Text)]
                          , object ["role" .= ("user" :: Text), "content" .= ("How many tokens does this question take?" :: Text)] ]
          prompt reg = do
            w <- newWindow (Just reg) "house-llm" Nothing
            windowLoad w conv
            windowPreflight w Nothing
      reg <- newRegistry
      _ <- registryRegister reg profile
      plain <- prompt reg
      calls <- newIORef (0 :: Int)
      registryRegisterCounter reg profile $ \t -> do
        modifyIORef' calls (+ 1)
        pure ((B.length (TE.encodeUtf8 t) + 3) `div` 4)
      counted <- prompt reg
      readIORef calls >>= (`shouldSatisfy` (> 0))
      int (counted .! "prompt_tokens") `shouldNotBe` int (plain .! "prompt_tokens")
      (counted .! "exact") `shouldBe` Bool False
      -- A stateless fit reaches the counter through fitIn's registry; fit
      -- (the built-in table) does not know the model.
      let fitOpts = object ["model" .= ("house-llm" :: Text), "max_tokens" .= (4000 :: Int)]
      before <- readIORef calls
      (_, rep) <- fitIn (Just reg) conv fitOpts
      readIORef calls >>= (`shouldSatisfy` (> before))
      int (rep .! "tokens_before") `shouldBe` int (counted .! "prompt_tokens")
      Left unknown <- try (fit conv fitOpts) :: IO (Either TurnfitError (Value, Value))
      status unknown `shouldBe` statusUnknownModel
      -- A counter that throws, returns a negative count, or calls turnfit.
      let failsWith f needle = do
            registryRegisterCounter reg profile f
            Left e <- try (prompt reg) :: IO (Either TurnfitError Value)
            status e `shouldBe` statusInvalidArgument
            message e `shouldSatisfy` T.isInfixOf "the host counter for 'house-llm' failed"
            message e `shouldSatisfy` T.isInfixOf needle
      failsWith (\_ -> throwIO (userError "no tokenizer loaded")) "no tokenizer loaded"
      failsWith (\_ -> pure (-1)) "not a non-negative count"
      failsWith (\t -> countTokensForModel "gpt-4o" t) "called from inside a host counter"
      -- A profile that is not one object: refused, nothing kept.
      Left e <- try (registryRegisterCounter reg (A.toJSON [profile]) (\_ -> pure 0)) :: IO (Either TurnfitError ())
      status e `shouldBe` 4
    it "fits for a model registered from its own files (registryRegisterModelFiles): the template's count, exact" $ do
      let template = "{% for m in messages %}{{ m.role }}:{{ m.content }}<|end|>{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}" :: Text
          tiny = "tests/vectors/files/tiny-byte-level.tokenizer.json" :: Text
          spec name = object ["name" .= (name :: Text), "tokenizer" .= tiny, "chat_template" .= template, "context_window" .= (2000 :: Int)]
          msg role c = object ["role" .= (role :: Text), "content" .= (c :: Text)]
          conv = A.toJSON (msg "system" "Be brief." : concat
                   [ [msg "user" ("question " <> T.pack (show i) <> " about the weather in a city"),
                      msg "assistant" ("answer " <> T.pack (show i) <> ": it is sunny there today")] | i <- [0 .. 59 :: Int] ])
          rendered (A.Array ms) = T.concat [str (m .! "role") <> ":" <> str (m .! "content") <> "<|end|>" | m <- V.toList ms] <> "assistant:"
          rendered _ = error "not an array"
      reg <- newRegistry
      info <- registryRegisterModelFiles reg (spec "tiny-hs-files")
      (info .! "exact") `shouldBe` Bool True
      ftok <- openFileTokenizer Recognize Nothing (T.unpack tiny)
      before <- fileCountTokens ftok (rendered conv)
      (out, rep) <- fitIn (Just reg) conv (object ["model" .= ("tiny-hs-files" :: Text), "max_tokens" .= (800 :: Int)])
      after <- fileCountTokens ftok (rendered out)
      (rep .! "exact") `shouldBe` Bool True
      int (rep .! "tokens_before") `shouldBe` before
      int (rep .! "tokens_after") `shouldBe` after
      after `shouldSatisfy` (<= int (rep .! "limit_tokens"))
      -- Bad files: a specific status and a message naming what is wrong.
      Left missing <- try (registryRegisterModelFiles reg (object ["name" .= ("m" :: Text), "tokenizer" .= ("/nonexistent/tokenizer.json" :: Text), "context_window" .= (100 :: Int)])) :: IO (Either TurnfitError Value)
      status missing `shouldBe` statusIo
      message missing `shouldSatisfy` T.isInfixOf "nonexistent"
      Left builtin <- try (registryRegisterModelFiles reg (spec "gpt-4o")) :: IO (Either TurnfitError Value)
      status builtin `shouldBe` statusInvalidArgument
    it "renders the design's toPromptText layout through the core (format prompt_text)" $ do
      t <- H.toPromptText design
      T.lines t `shouldBe`
        [ "=== Context from Previous Agent ==="
        , "Task: Collect the failing tests and hand them to the fixer."
        , "Key Outputs:"
        , "- tests/parser.rs::threads fails 1 in 20"
        , "- [src/parser.rs] the buffer is shared"
        , ""
        , "Metadata: from=collector to=fixer created_at=2026-03-01T12:00:00Z"
        , "==================================="
        ]
      block <- H.renderHandoffObject H.renderHandoff design
      H.hrText block `shouldSatisfy` T.isPrefixOf "<handoff version=\"1.0\" from=\"collector\""
      r <- H.renderHandoffObject H.renderHandoff {H.rhFormat = Just H.FormatPromptText, H.rhBudget = Just 1000} design
      H.hrText r `shouldBe` t
      H.hrTokens r `shouldBe` countTokens cl100k t
      Left e <- (try (handoffRender (A.toJSON design) (Just (object ["format" .= ("xml" :: Text)]))) :: IO (Either TurnfitError Value))
      status e `shouldBe` statusInvalidJson
    it "logs each finished tool call through LoggingT (span_finished, LogEntry levels)" $ do
      t <- newTracer (Just (object ["span_finished_events" .= True]))
      logged <- newIORef []
      let sink _ src lvl msg = modifyIORef' logged ((src, lvl, TE.decodeUtf8 (ML.fromLogStr msg)) :)
      ML.runLoggingT (do
          h <- L.loggingTHandler
          ML.logInfoN "agent starts"
          liftIO $ do
            onTracerEvents t (Just h)
            ok <- tracerStart t "shell" (Just (object ["agent_id" .= ("fixer" :: Text), "input" .= ("ls" :: Text)])) 0 0
            tracerEnd t ok SpanSuccess 3 Nothing 40
            bad <- tracerStart t "shell" (Just (object ["agent_id" .= ("fixer" :: Text)])) 0 100
            tracerEnd t bad SpanFailed 0 (Just "exit status 2") 150) sink
      ls <- reverse <$> readIORef logged
      [lvl | (_, lvl, _) <- ls] `shouldBe` [ML.LevelInfo, ML.LevelInfo, ML.LevelError]
      [src | (src, _, _) <- drop 1 ls] `shouldBe` ["turnfit", "turnfit"]
      let (_, _, failedLine) = ls !! 2
      failedLine `shouldSatisfy` T.isInfixOf "agent=fixer tool=shell tool shell failed in 50 us: exit status 2"
    it "a LogHandler instance gets LogEntry records; AtLeast filters by level; without span_finished_events an end is silent" $ do
      quiet <- newTracer Nothing
      entries <- newIORef []
      onTracerEvents quiet (Just (L.logEvents (L.HandlerFn (\e -> modifyIORef' entries (e :)))))
      sid <- tracerStart quiet "grep" Nothing 0 0
      tracerEnd quiet sid SpanSuccess 0 Nothing 5
      readIORef entries `shouldReturn` []
      t <- newTracer (Just (object ["span_finished_events" .= True]))
      onTracerEvents t (Just (L.logEvents (L.AtLeast ML.LevelWarn (L.HandlerFn (\e -> modifyIORef' entries (e :))))))
      a <- tracerStart t "grep" Nothing 0 0
      tracerEnd t a SpanSuccess 0 Nothing 5
      b <- tracerStart t "grep" (Just (object ["agent_id" .= ("coder" :: Text)])) 0 10
      tracerEnd t b SpanTimeout 0 (Just "deadline of 1 ms exceeded") 20
      es <- readIORef entries
      map L.entryLevel es `shouldBe` [ML.LevelError]
      map L.entryToolName es `shouldBe` [Just "grep"]
      map L.entryAgentId es `shouldBe` [Just "coder"]
      map (KM.lookup "outcome" . L.entryMetadata) es `shouldBe` [Just (String "timeout")]
      rec <- case es of
        [e] -> decodeTyped "span record" (Object (L.entryMetadata e))
        _ -> fail "one entry"
      TR.spOutcome rec `shouldBe` "timeout"
      TR.spErrorCategory rec `shouldBe` Just "timeout"
      L.eventLevel (Event "compacted" (object [])) `shouldBe` ML.LevelInfo
      L.eventLevel (Event "budget_crossed" (object ["to" .= ("overflow" :: Text)])) `shouldBe` ML.LevelError
    it "decodes a tracer export, a skill listing and compact outcomes into records" $ do
      t <- newTracer Nothing
      s1 <- tracerStart t "run_tests" (Just (object ["agent_id" .= ("coder" :: Text), "input" .= ("pytest" :: Text)])) 10 0
      tracerEndWith t s1 SpanFailed (Just (object ["error" .= ("exit status 1" :: Text), "output" .= ("FAILED" :: Text)])) 500
      _ <- tracerStart t "web_fetch" Nothing 0 600
      ex <- TR.tracerExportTyped t 700
      TR.teSpansStarted ex `shouldBe` 2
      TR.teSpansEnded ex `shouldBe` 1
      map TR.tmTool (TR.teTools ex) `shouldBe` ["run_tests", "web_fetch"]
      map TR.tmErrors (TR.teTools ex) `shouldBe` [1, 0]
      fmap TR.duMax (TR.tmDurationUs (head (TR.teTools ex))) `shouldBe` Just 500
      TR.teErrorCategories ex `shouldBe` M.fromList [("tool_failed", 1)]
      map TR.osTool (TR.teOpen ex) `shouldBe` ["web_fetch"]
      map (\r -> (TR.spTool r, TR.spOutcome r, TR.spInputExcerpt r, TR.spOutputExcerpt r)) (TR.teRecent ex)
        `shouldBe` [("run_tests", "failed", Just "pytest", Just "FAILED")]
      sk <- openSkills "examples/seeds/004-haskell-framework/skills" Nothing
      lst <- TR.skillsListTyped sk
      map TR.seName (TR.slSkills lst) `shouldBe` ["code-review", "debugging-checklist"]
      map (fmap TR.shCategory . TR.seHeader) (TR.slSkills lst) `shouldBe` [Just (Just "engineering"), Just (Just "debugging")]
      TR.slInvalid lst `shouldBe` 0
      map TR.igPath (TR.slIgnored lst) `shouldBe` ["README.md"]
      w <- newWindow Nothing "gpt-4o" (Just (object ["context_window" .= (2000 :: Int), "reserved_output" .= (100 :: Int)]))
      let msg r k = object ["role" .= (r :: Text), "content" .= T.unwords (replicate k "word")]
      windowLoad w (A.toJSON ([msg "system" 10] ++ concat (replicate 8 [msg "user" 150, msg "assistant" 150]) ++ [msg "user" 5]))
      TR.windowCompactTyped w (Just (object ["strategy" .= ("summarize" :: Text)])) >>= \o -> case o of
        TR.CompactNeedsSummary r -> do
          TR.srMaxSummaryTokens r `shouldSatisfy` (> 0)
          TR.srPrompt r `shouldSatisfy` (not . T.null)
          TR.srMessages r `shouldSatisfy` (not . null)
        other -> expectationFailure ("expected a summary request, got " ++ show other)
      TR.windowCompactTyped w (Just (object ["strategy" .= ("recency" :: Text)])) >>= \o -> case o of
        TR.CompactDone r -> TR.crTokensAfter r `shouldSatisfy` (< TR.crTokensBefore r)
        other -> expectationFailure ("expected done, got " ++ show other)
    it "hands a turn's summarizer a typed SummarizerCall" $ do
      calls <- newIORef []
      let conv = object ["model" .= ("gpt-4o" :: Text), "messages" .= ([object ["role" .= ("system" :: Text), "content" .= ("You help." :: Text)]] ++ concat [[object ["role" .= ("user" :: Text), "content" .= T.unwords (replicate 300 (T.pack ("q" ++ show k)))], object ["role" .= ("assistant" :: Text), "content" .= T.unwords (replicate 300 (T.pack ("a" ++ show k)))]] | k <- [1 .. 10 :: Int]] ++ [object ["role" .= ("user" :: Text), "content" .= ("next?" :: Text)]])]
          opts = object ["model" .= ("gpt-4o" :: Text), "max_tokens" .= (4000 :: Int), "reserve_output" .= (500 :: Int), "policy" .= object ["strategy" .= ("summarize" :: Text)]]
      r <- fitTurn conv opts (TR.typedSummarizer (\c -> modifyIORef' calls (c :) >> pure "The user asked ten questions; all answered."))
      case r of
        Right (_, report) -> (report .! "summary") .! "source" `shouldBe` String "host"
        Left e -> expectationFailure (show e)
      cs <- readIORef calls
      cs `shouldSatisfy` (not . null)
      map TR.scMaxSummaryTokens cs `shouldSatisfy` all (> 0)
      map TR.scPiece cs `shouldSatisfy` all (>= 1)

  vectorSpecs "tokenizer vectors" "tests/vectors/tokenizer.json" (fmap Just . runTokenizerVector . fst)
  vectorSpecs "file tokenizer vectors" "tests/vectors/file_tokenizer.json" (fmap Just . runFileTokenizerVector . fst)
  vectorSpecs "window vectors" "tests/vectors/window.json" (fmap Just . runWindowVector)
  vectorSpecs "agent-loop window vectors" "tests/vectors/window_loops.json" (fmap Just . runWindowVector)
  vectorSpecs "model vectors" "tests/vectors/models.json" (fmap Just . runModelVector . fst)
  vectorSpecs "skills vectors" "tests/vectors/skills.json" (fmap Just . runAgentVector)
  vectorSpecs "handoff vectors" "tests/vectors/handoff.json" (fmap Just . runAgentVector)
  vectorSpecs "assemble vectors" "tests/vectors/assemble.json" (fmap Just . runAgentVector)
  vectorSpecs "recovery vectors" "tests/vectors/recovery.json" (runRecoveryVector . fst)
