{-# LANGUAGE OverloadedStrings #-}
{-# LANGUAGE ScopedTypeVariables #-}
{-# LANGUAGE LambdaCase #-}

-- | Idiomatic Haskell API over the turnfit C ABI ("Turnfit.Raw").
--
-- * Handles ('Tokenizer', 'Registry', 'Window', 'Skills', 'Breaker',
--   'CallStack', 'Tracer') are 'ForeignPtr's whose finalizers call the C
--   @_free@ functions. All of them may be shared between Haskell threads
--   (the C ABI documents every handle as thread-safe).
-- * Text goes in as UTF-8 ('encodeUtf8'). Results come out as owned
--   @turnfit_string@s and are never copied as bytes: a 'B.ByteString' result
--   adopts the library's buffer (its finalizer calls
--   @turnfit_string_free_parts@), while a 'Text' or JSON result is decoded
--   straight from the buffer, which is freed as soon as the decoded value
--   is fully built.
-- * Structured inputs and outputs are aeson 'Value's: the binding encodes
--   and decodes JSON and does nothing else with it (docs/formats.md has the
--   shapes). aeson's objects sort their keys, so where key order matters
--   (summary ids, assembly context sections, handoff custom fields) use the
--   @...Bytes@ variants, which pass JSON text through as written.
-- * Failures are thrown as 'TurnfitError' (status number and the library's
--   message). The main calls also have an @...E@ variant returning 'Either'.
-- * 'countTokens' and 'encodeTokens' are pure: a tokenizer is immutable, so
--   the same text always gives the same result. They use 'unsafePerformIO';
--   the only failure left for 'Text' input is a text over 64 MiB
--   (LIMIT_EXCEEDED), which is thrown when the result is forced. Use
--   'countTokensIO' to get that error in 'IO'.
module Turnfit
  ( -- * Errors
    TurnfitError (..)
  , Status
  , statusOk, statusNullArgument, statusInvalidUtf8, statusInvalidArgument
  , statusInvalidJson, statusLimitExceeded, statusUnknownEncoding
  , statusUnknownModel, statusUnknownToken, statusPanic, statusInternal
  , statusDoesNotFit, statusIo, statusUnsafePath, statusCycleDetected
  , statusDepthExceeded, statusInvalidYaml, statusKindName
  , statusName
  , tryTurnfit
    -- * Library
  , version, abiVersion, headerAbiVersion, clockNowUs
    -- * Tokenizer
  , Tokenizer
  , SpecialTokens (..)
  , newTokenizer, newTokenizerWith, newTokenizerE, newTokenizerForModel
  , tokenizerInfo
  , countTokens, countTokensIO, countTokensForModel, countUntilLimit
  , encodeTokens, encodeTokensIO
  , DecodeMode (..), decodeTokens, decodeTokensE
  , tokenBytes, decodeBytes, tokenId, encodeBytes, decodeWithOffsets
  , SpecialSet (..), encodeSpecial, encodeSpecialE, specialTokens
  , TruncateSide (..), Truncated (..), truncateTokens, truncateTokensE
    -- * Tokenizers loaded from a model's file
  , FileTokenizer, openFileTokenizer, fileTokenizerFromBytes, fileTokenizerInfo
  , fileCountTokens, fileEncode, fileDecode
    -- * Model registry
  , Registry, newRegistry, registryRegister, registryLookup, registryList, registryRegisterCounter
  , registryRegisterModelFiles
    -- * Context window
  , Window, newWindow, windowLoad, windowPush, windowPreflight, windowPreflightE, windowCalibrate
  , windowValidate, windowRepair, windowConversation
  , windowCompact, windowCompactE, windowApplySummary
  , fit, fitIn, fitE, fitBytes, windowLoadBytes, windowPushBytes
    -- * Turns: the host's model summarizing
  , Summarizer, fitTurn, windowFitTurn
    -- * Assembly and tool sets
  , assemble, assembleBytes, toolsetReport, toolsetSelect
    -- * Skills
  , Skills, openSkills, openSkillsIn, skillsList, skillsBody, skillsRenderIndex
    -- * Handoffs
  , handoffValidate, handoffRender, handoffRenderIn, handoffFilter
    -- ** As JSON text (key order kept)
  , handoffValidateBytes, handoffRenderBytes, handoffRenderInBytes, handoffFilterBytes
    -- * Recovery
  , classifyError, backoff
  , Breaker, newBreaker, breakerAllow, breakerRecordSuccess, breakerRecordFailure, breakerState
  , breakerRecordFailureIn, breakerFailureCounts, classifyErrorIn
  , BreakerState (..), breakerStateName
    -- * Call stacks
  , CallStack, newCallStack, defaultCallStackDepth, callStackFromJson, callStackEnter, callStackEnterE, callStackToJson
    -- * Tool telemetry
  , Tracer, SpanOutcome (..), newTracer, tracerStart, tracerEnd, tracerEndWith
  , tracerOverdue, tracerExpire, tracerExport
    -- * Events
  , Event (..), onWindowEvents, onBreakerEvents, onTracerEvents, openSkillsWithEvents
    -- * Raw access
  , withTokenizerPtr
  ) where

import Control.DeepSeq (NFData, force)
import Control.Exception (Exception, SomeAsyncException, SomeException, bracket, catch, displayException, evaluate, fromException, mask, mask_, onException, throwIO, try)
import Data.Aeson (Value)
import qualified Data.Aeson as A
import qualified Data.ByteString as B
import qualified Data.ByteString.Internal as BI
import qualified Data.ByteString.Lazy as BL
import qualified Data.ByteString.Unsafe as BU
import Data.Text (Text)
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import Data.Word (Word8, Word32, Word64)
import Foreign.C.String (CString, peekCString)
import Foreign.C.Types (CBool (..), CDouble (..), CSize (..))
import Foreign.ForeignPtr (FinalizerEnvPtr, ForeignPtr, FinalizerPtr, addForeignPtrFinalizerEnv, newForeignPtr, newForeignPtrEnv, withForeignPtr)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Marshal.Array (peekArray, withArrayLen)
import Foreign.Ptr (FunPtr, Ptr, castFunPtrToPtr, castPtr, freeHaskellFunPtr, nullFunPtr, nullPtr, plusPtr)
import Foreign.Storable (peek, poke, pokeByteOff)
import Foreign.Marshal.Utils (copyBytes)
import Control.Monad (when)
import System.IO.Unsafe (unsafePerformIO)
import System.Timeout (timeout)
import qualified Data.Aeson.KeyMap as KM

import Turnfit.Raw hiding (TurnfitError)
import qualified Turnfit.Raw as R

-- ---------------------------------------------------------------------------
-- Errors

-- | A @turnfit_status@ number (0 is OK).
type Status = Word32

-- | A failed turnfit call: the status number and the library's message, which
-- starts with the name of the C function that failed.
data TurnfitError = TurnfitError {status :: !Status, message :: !Text}
  deriving (Eq, Show)

instance Exception TurnfitError

statusOk, statusNullArgument, statusInvalidUtf8, statusInvalidArgument,
  statusInvalidJson, statusLimitExceeded, statusUnknownEncoding,
  statusUnknownModel, statusUnknownToken, statusPanic, statusInternal,
  statusDoesNotFit, statusIo, statusUnsafePath, statusCycleDetected,
  statusDepthExceeded, statusInvalidYaml :: Status
statusOk = kStatusOk
statusNullArgument = kStatusNullArgument
statusInvalidUtf8 = kStatusInvalidUtf8
statusInvalidArgument = kStatusInvalidArgument
statusInvalidJson = kStatusInvalidJson
statusLimitExceeded = kStatusLimitExceeded
statusUnknownEncoding = kStatusUnknownEncoding
statusUnknownModel = kStatusUnknownModel
statusUnknownToken = kStatusUnknownToken
statusPanic = kStatusPanic
statusInternal = kStatusInternal
statusDoesNotFit = kStatusDoesNotFit
statusIo = kStatusIo
statusUnsafePath = kStatusUnsafePath
statusCycleDetected = kStatusCycleDetected
statusDepthExceeded = kStatusDepthExceeded
statusInvalidYaml = kStatusInvalidYaml

-- | The stable name of a status (@"unknown_encoding"@ ...), from the library.
statusName :: Status -> Text
statusName s = unsafePerformIO $ do
  p <- cStatusName s
  if p == nullPtr then pure (T.pack ("status " ++ show s)) else T.pack <$> peekCString p

-- | The core's kind name of a status (@unknown_model@, ...), as the test
-- vectors and every other binding spell it (@turnfit_status_kind_name@).
statusKindName :: Status -> Text
statusKindName s = unsafePerformIO $ do
  p <- cStatusKindName s
  if p == nullPtr then pure "unrecognized" else T.pack <$> peekCString p

-- | Runs an action, catching only 'TurnfitError'.
tryTurnfit :: IO a -> IO (Either TurnfitError a)
tryTurnfit = try

-- | Calls a fallible C function with an error out-parameter; a non-zero
-- status becomes a thrown 'TurnfitError' (the C error is read and freed).
check :: (Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO ()
check call = alloca $ \errp -> do
  poke errp nullPtr
  rc <- call errp
  if rc == kStatusOk
    then pure ()
    else do
      e <- peek errp
      if e == nullPtr
        then throwIO (TurnfitError rc (statusName rc))
        else do
          msg <- alloca $ \lenp -> do
            p <- cErrorMessage e lenp
            n <- peek lenp
            if p == nullPtr
              then pure B.empty
              else B.packCStringLen (p, fromIntegral n)
          cErrorFree e
          throwIO (TurnfitError rc (TE.decodeUtf8With (\_ _ -> Just '\xFFFD') msg))

-- | Calls a function that writes an owned @turnfit_string@; returns its
-- bytes as a 'B.ByteString' that adopts the buffer (see 'takeOwnedString').
withOutString :: (Ptr TurnfitString -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO B.ByteString
withOutString call = alloca $ \sp -> do
  poke sp (TurnfitString nullPtr 0)
  check (call sp)
  takeOwnedString sp

-- | Takes an owned turnfit_string written by a successful call as a
-- 'B.ByteString' without copying it: the ByteString's 'ForeignPtr' is the
-- data pointer itself, with a C finalizer (@turnfit_hs_free_string@ in
-- cbits/strings.c) that calls @turnfit_string_free_parts(ptr, len)@ when the
-- garbage collector finds the ByteString (and every slice of it) dead. The
-- length travels as the finalizer's environment, so no memory is allocated
-- per string. An empty result is freed at once and is 'B.empty'.
takeOwnedString :: Ptr TurnfitString -> IO B.ByteString
takeOwnedString sp = mask_ $ do
  TurnfitString p n <- peek sp
  poke sp (TurnfitString nullPtr 0)
  if p == nullPtr || n == 0
    then cStringFreeParts (castPtr p) n >> pure B.empty
    else do
      fp <- newForeignPtrEnv pFreeString (nullPtr `plusPtr` fromIntegral n) p
      pure (BI.fromForeignPtr fp 0 (fromIntegral n))

foreign import ccall unsafe "&turnfit_hs_free_string"
  pFreeString :: FinalizerEnvPtr () Word8

-- | Reads an owned turnfit_string written by a successful call in place:
-- the consumer sees the library's buffer (no copy), its result is forced
-- to normal form, and the buffer is freed right after, also when the
-- consumer throws. For results that are decoded (JSON, 'Text'), so the
-- buffer is not kept until a garbage collection.
consumeOwnedString :: NFData a => Ptr TurnfitString -> (B.ByteString -> IO a) -> IO a
consumeOwnedString sp k = mask $ \restore -> do
  TurnfitString p n <- peek sp
  poke sp (TurnfitString nullPtr 0)
  let release = cStringFreeParts (castPtr p) n
  r <- restore (do
    bs <- if p == nullPtr then pure B.empty else BU.unsafePackCStringLen (castPtr p, fromIntegral n)
    k bs >>= evaluate . force) `onException` release
  release
  pure r

-- | 'withOutString' for results that are decoded: the decoder reads the
-- library's buffer in place (see 'consumeOwnedString').
withOutDecoded :: NFData a => (B.ByteString -> IO a) -> (Ptr TurnfitString -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO a
withOutDecoded k call = alloca $ \sp -> do
  poke sp (TurnfitString nullPtr 0)
  check (call sp)
  consumeOwnedString sp k

-- | As 'withOutString', decoding the result as JSON.
withOutJson :: (Ptr TurnfitString -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO Value
withOutJson = withOutDecoded decodeJson

-- | As 'withOutString', decoding the result as UTF-8 text (invalid bytes
-- become U+FFFD).
withOutText :: (Ptr TurnfitString -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO Text
withOutText = withOutDecoded (pure . utf8)

decodeJson :: B.ByteString -> IO Value
decodeJson bs = case A.eitherDecodeStrict' bs of
  Right v -> pure v
  Left e -> throwIO (TurnfitError kStatusInternal (T.pack ("turnfit returned JSON aeson could not read: " ++ e)))

-- | Text as (ptr, len) UTF-8 (@const char *@ in C). An empty text may be
-- (NULL, 0): the C ABI reads that as "".
withText :: Text -> (CString -> CSize -> IO a) -> IO a
withText t = withBytes (TE.encodeUtf8 t)

-- | A ByteString as (ptr, len): a @const char *@ text parameter (UTF-8 the
-- library checks) or a @const uint8_t *@ bytes parameter.
withBytes :: B.ByteString -> (Ptr b -> CSize -> IO a) -> IO a
withBytes bs k = BU.unsafeUseAsCStringLen bs $ \(p, n) -> k (castPtr p) (fromIntegral n)

-- | Nothing is (NULL, 0), the C ABI's "absent".
withMaybeText :: Maybe Text -> (CString -> CSize -> IO a) -> IO a
withMaybeText Nothing k = k nullPtr 0
withMaybeText (Just t) k = withText t k

withJson :: Value -> (CString -> CSize -> IO a) -> IO a
withJson v = withBytes (BL.toStrict (A.encode v))

-- | Nothing is (NULL, 0); Just bytes pass through untouched.
withMaybeBytes :: Maybe B.ByteString -> (Ptr b -> CSize -> IO a) -> IO a
withMaybeBytes Nothing k = k nullPtr 0
withMaybeBytes (Just bs) k = withBytes bs k

withMaybeJson :: Maybe Value -> (CString -> CSize -> IO a) -> IO a
withMaybeJson Nothing k = k nullPtr 0
withMaybeJson (Just v) k = withJson v k

-- | Calls a constructor with a handle out-parameter and wraps the handle in
-- a 'ForeignPtr' with its @_free@ finalizer.
newHandle :: FinalizerPtr h -> (Ptr (Ptr h) -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO (ForeignPtr h)
newHandle fin call = alloca $ \hp -> do
  poke hp nullPtr
  check (call hp)
  mask_ (peek hp >>= newForeignPtr fin)

utf8 :: B.ByteString -> Text
utf8 = TE.decodeUtf8With (\_ _ -> Just '\xFFFD')

-- ---------------------------------------------------------------------------
-- Library

-- | The library version ("0.1.0").
version :: Text
version = unsafePerformIO (T.pack <$> (cVersion >>= peekCString))
{-# NOINLINE version #-}

-- | The ABI revision of the loaded library.
abiVersion :: Word32
abiVersion = unsafePerformIO cAbiVersion
{-# NOINLINE abiVersion #-}

-- | The ABI revision of the header this binding was generated from.
headerAbiVersion :: Word32
headerAbiVersion = kAbiVersion

-- | Microseconds since the Unix epoch (the tracer's clock).
clockNowUs :: IO Word64
clockNowUs = cClockNowUs

-- ---------------------------------------------------------------------------
-- Tokenizer

-- | An exact tokenizer for one encoding. Immutable; share it freely.
newtype Tokenizer = Tokenizer (ForeignPtr TurnfitTokenizer)

-- | Whether special-token text such as @<|endoftext|>@ is recognised.
data SpecialTokens = Ordinary | Recognize deriving (Eq, Ord, Show)

specialFlags :: SpecialTokens -> Word32
specialFlags Ordinary = 0
specialFlags Recognize = kTokenizerRecognizeSpecial

-- | A tokenizer for an encoding name (@"cl100k_base"@ ...), special-token
-- text counted as ordinary text. Unknown names throw UNKNOWN_ENCODING.
newTokenizer :: Text -> IO Tokenizer
newTokenizer = newTokenizerWith Ordinary

newTokenizerWith :: SpecialTokens -> Text -> IO Tokenizer
newTokenizerWith sp enc = fmap Tokenizer $ withText enc $ \p n ->
  newHandle pTokenizerFree (cTokenizerNew p n (specialFlags sp))

newTokenizerE :: Text -> IO (Either TurnfitError Tokenizer)
newTokenizerE = try . newTokenizer

-- | A tokenizer for a model name, looked up in the registry (Nothing: the
-- built-in table), with an optional fallback encoding for unknown models.
newTokenizerForModel :: Maybe Registry -> Text -> Maybe Text -> SpecialTokens -> IO Tokenizer
newTokenizerForModel reg model fallback sp =
  withRegistry reg $ \rp -> withText model $ \mp mn -> withMaybeText fallback $ \fp fnl ->
    Tokenizer <$> newHandle pTokenizerFree (cTokenizerNewForModel rp mp mn fp fnl (specialFlags sp))

withTok :: Tokenizer -> (Ptr TurnfitTokenizer -> IO a) -> IO a
withTok (Tokenizer fp) = withForeignPtr fp

-- | The live C handle, for calls through "Turnfit.Raw". It stays valid only
-- inside the callback.
withTokenizerPtr :: Tokenizer -> (Ptr TurnfitTokenizer -> IO a) -> IO a
withTokenizerPtr = withTok

tokenizerInfo :: Tokenizer -> IO Value
tokenizerInfo t = withTok t $ \tp -> withOutJson (cTokenizerInfo tp)

-- | The exact token count of a text (pure; see the module header).
countTokens :: Tokenizer -> Text -> Int
countTokens t s = unsafePerformIO (countTokensIO t s)
{-# NOINLINE countTokens #-}

countTokensIO :: Tokenizer -> Text -> IO Int
countTokensIO t s = withTok t $ \tp -> withText s $ \p n -> alloca $ \out -> do
  check (cTokenizerCount tp p n out)
  fromIntegral <$> peek out

-- | The one-shot count of the Haskell design (seed document 004): a model
-- name and a text, the exact token count with that model's encoding (the
-- built-in model table; UNKNOWN_MODEL for a name it does not know). It
-- makes a tokenizer per call, which is cheap (encodings are built once per
-- process and shared) but not free: for many counts, keep a 'Tokenizer'
-- from 'newTokenizerForModel' and use 'countTokens'.
countTokensForModel :: Text -> Text -> IO Int
countTokensForModel model text = do
  t <- newTokenizerForModel Nothing model Nothing Ordinary
  countTokensIO t text

-- | Counts up to a limit: @(n, False)@ when the text has @n <= limit@
-- tokens, else @(m, True)@ with some @m > limit@ (counting may stop early).
countUntilLimit :: Tokenizer -> Int -> Text -> IO (Int, Bool)
countUntilLimit t limit s = withTok t $ \tp -> withText s $ \p n ->
  alloca $ \outN -> alloca $ \outE -> do
    check (cTokenizerCountUntilLimit tp p n (fromIntegral limit) outN outE)
    (,) <$> (fromIntegral <$> peek outN) <*> ((\(CBool b) -> b /= 0) <$> peek outE)

-- | The token ids of a text (pure; see the module header).
encodeTokens :: Tokenizer -> Text -> [Word32]
encodeTokens t s = unsafePerformIO (encodeTokensIO t s)
{-# NOINLINE encodeTokens #-}

encodeTokensIO :: Tokenizer -> Text -> IO [Word32]
encodeTokensIO t s = withTok t $ \tp -> withText s $ \p n -> alloca $ \out -> do
  poke out (TurnfitTokens nullPtr 0)
  check (cTokenizerEncode tp p n out)
  mask_ $ do
    TurnfitTokens ip len <- peek out
    ids <- if ip == nullPtr then pure [] else peekArray (fromIntegral len) ip
    cTokensFree out
    pure ids

-- | 'Replace' turns bytes that are not UTF-8 into U+FFFD; 'Ignore' drops
-- them; 'Strict' throws INVALID_UTF8. Unknown ids throw UNKNOWN_TOKEN in
-- every mode.
data DecodeMode = Replace | Strict | Ignore deriving (Eq, Show)

decodeTokens :: Tokenizer -> DecodeMode -> [Word32] -> IO Text
decodeTokens t mode ids = withTok t $ \tp -> withArrayLen ids $ \n ip ->
  withOutText (cTokenizerDecode tp ip (fromIntegral n) m)
  where
    m = case mode of
      Replace -> kDecodeModeReplace
      Strict -> kDecodeModeStrict
      Ignore -> kDecodeModeIgnore

decodeTokensE :: Tokenizer -> DecodeMode -> [Word32] -> IO (Either TurnfitError Text)
decodeTokensE t m ids = try (decodeTokens t m ids)

-- | The bytes of one token, ordinary or special (tiktoken's
-- @decode_single_token_bytes@); not necessarily UTF-8. UNKNOWN_TOKEN for an
-- id not in the vocabulary.
tokenBytes :: Tokenizer -> Word32 -> IO B.ByteString
tokenBytes t i = withTok t $ \tp -> withOutString (cTokenizerTokenBytes tp i)

-- | The bytes of a list of ids, concatenated (tiktoken's @decode_bytes@).
decodeBytes :: Tokenizer -> [Word32] -> IO B.ByteString
decodeBytes t ids = withTok t $ \tp -> withArrayLen ids $ \n ip ->
  withOutString (cTokenizerDecodeBytes tp ip (fromIntegral n))

-- | The id of the single token whose bytes are exactly these (ordinary, or a
-- special token's text; tiktoken's @encode_single_token@). UNKNOWN_TOKEN if none.
tokenId :: Tokenizer -> B.ByteString -> IO Word32
tokenId t bs = withTok t $ \tp -> withBytes bs $ \p n -> alloca $ \out -> do
  check (cTokenizerTokenId tp p n out)
  peek out

-- | The ids of bytes that need not be UTF-8, as tiktoken's @_encode_bytes@.
encodeBytes :: Tokenizer -> B.ByteString -> IO [Word32]
encodeBytes t bs = withTok t $ \tp -> withBytes bs $ \p n -> withOutTokens (cTokenizerEncodeBytes tp p n)

-- | The text of the ids (INVALID_UTF8 if it is not UTF-8) and, per token, the
-- character offset where it starts (tiktoken's @decode_with_offsets@).
decodeWithOffsets :: Tokenizer -> [Word32] -> IO (Text, [Int])
decodeWithOffsets t ids = withTok t $ \tp -> withArrayLen ids $ \n ip ->
  alloca $ \sp -> alloca $ \op -> do
    poke sp (TurnfitString nullPtr 0)
    poke op (TurnfitTokens nullPtr 0)
    check (cTokenizerDecodeWithOffsets tp ip (fromIntegral n) sp op)
    text <- consumeOwnedString sp (pure . utf8)
    offs <- takeOwnedTokens op
    pure (text, map fromIntegral offs)

-- | tiktoken's @allowed_special@ / @disallowed_special@: every special token,
-- or the strings named (@OnlySpecial []@ is none).
data SpecialSet = AllSpecial | OnlySpecial [Text] deriving (Eq, Show)

-- | Encodes with tiktoken's special-token rules: the allowed special tokens
-- become their ids; text matching a disallowed string throws
-- INVALID_ARGUMENT naming it. tiktoken's default is
-- @encodeSpecial t (OnlySpecial []) AllSpecial@.
encodeSpecial :: Tokenizer -> SpecialSet -> SpecialSet -> Text -> IO [Word32]
encodeSpecial t allowed disallowed s = withTok t $ \tp -> withText s $ \p n ->
  withJson policy $ \jp jn -> withOutTokens (cTokenizerEncodeSpecial tp p n jp jn)
  where
    policy = A.object ["allowed_special" A..= set allowed, "disallowed_special" A..= set disallowed]
    set AllSpecial = A.String "all"
    set (OnlySpecial xs) = A.toJSON xs

encodeSpecialE :: Tokenizer -> SpecialSet -> SpecialSet -> Text -> IO (Either TurnfitError [Word32])
encodeSpecialE t a d s = try (encodeSpecial t a d s)

-- | The encoding's special tokens and their ids, in the encoding's order.
specialTokens :: Tokenizer -> IO [(Text, Word32)]
specialTokens t = do
  v <- withTok t $ \tp -> withOutJson (cTokenizerSpecialTokens tp)
  case A.fromJSON v of
    A.Success xs -> pure [(k, i) | SpecialToken k i <- xs]
    A.Error e -> throwIO (TurnfitError kStatusInternal (T.pack ("unexpected special-token list: " ++ e)))

data SpecialToken = SpecialToken Text Word32

instance A.FromJSON SpecialToken where
  parseJSON = A.withObject "special token" $ \o -> SpecialToken <$> o A..: "token" <*> o A..: "id"

-- | Calls a function that writes an owned @turnfit_tokens@; returns the values.
withOutTokens :: (Ptr TurnfitTokens -> Ptr (Ptr R.TurnfitError) -> IO Word32) -> IO [Word32]
withOutTokens call = alloca $ \out -> do
  poke out (TurnfitTokens nullPtr 0)
  check (call out)
  takeOwnedTokens out

takeOwnedTokens :: Ptr TurnfitTokens -> IO [Word32]
takeOwnedTokens out = mask_ $ do
  TurnfitTokens ip len <- peek out
  ids <- if ip == nullPtr then pure [] else peekArray (fromIntegral len) ip
  cTokensFree out
  pure ids

data TruncateSide = KeepHead | KeepTail | KeepBoth deriving (Eq, Show)

data Truncated = Truncated
  { truncatedText :: !Text
  , truncatedTokens :: !Int -- ^ tokens of the result, marker included
  , truncatedRemoved :: !Int -- ^ input tokens not in the result
  }
  deriving (Eq, Show)

-- | Cuts a text to at most @max@ tokens. The marker (for 'KeepBoth') is a
-- template where @{removed}@ becomes the removed count; Nothing is the
-- library's default marker and @Just ""@ no marker at all (the core's
-- meaning; the C ABI spells it with 'kTruncateNoMarker').
truncateTokens :: Tokenizer -> TruncateSide -> Maybe Text -> Int -> Text -> IO Truncated
truncateTokens t side marker maxTokens s = withTok t $ \tp -> withText s $ \p n ->
  withMaybeText marker' $ \mp mn -> alloca $ \outT -> alloca $ \outR -> do
    txt <- withOutText $ \sp -> cTokenizerTruncate tp p n (fromIntegral maxTokens) (sd + noMarker) mp mn sp outT outR
    Truncated txt <$> (fromIntegral <$> peek outT) <*> (fromIntegral <$> peek outR)
  where
    (marker', noMarker) = if marker == Just "" then (Nothing, kTruncateNoMarker) else (marker, 0)
    sd = case side of
      KeepHead -> kTruncateSideHead
      KeepTail -> kTruncateSideTail
      KeepBoth -> kTruncateSideBoth

truncateTokensE :: Tokenizer -> TruncateSide -> Maybe Text -> Int -> Text -> IO (Either TurnfitError Truncated)
truncateTokensE t side marker m s = try (truncateTokens t side marker m s)

-- ---------------------------------------------------------------------------
-- Tokenizers loaded from a model's file

-- | A tokenizer loaded from a model's own file: an HF @tokenizer.json@, a
-- GGUF (metadata only, of any size) or a tiktoken-format file with a split
-- pattern (for an Ollama model, its GGUF blob). Ids equal HF @tokenizers@'
-- (llama.cpp's for a GGUF). Immutable; share it freely.
newtype FileTokenizer = FileTokenizer (ForeignPtr TurnfitFileTokenizer)

-- | Loads the file at a path (given to the C library as UTF-8). The pattern
-- names a tiktoken-format file's split rules (a preset such as @"llama3"@,
-- or a regex); 'Nothing' for files that declare their own. Bad files throw
-- IO, INVALID_JSON, INVALID_ARGUMENT or LIMIT_EXCEEDED, naming the file.
openFileTokenizer :: SpecialTokens -> Maybe Text -> FilePath -> IO FileTokenizer
openFileTokenizer sp pattern path = withText (T.pack path) $ \pp pn -> withMaybeText pattern $ \tp tn ->
  FileTokenizer <$> newHandle pFileTokenizerFree (cFileTokenizerOpen pp pn tp tn (specialFlags sp))

-- | A tokenizer from the bytes of a file; the name stands for the file in errors.
fileTokenizerFromBytes :: SpecialTokens -> Maybe Text -> Text -> B.ByteString -> IO FileTokenizer
fileTokenizerFromBytes sp pattern name bs = withBytes bs $ \bp bn -> withText name $ \np nn ->
  withMaybeText pattern $ \tp tn ->
    FileTokenizer <$> newHandle pFileTokenizerFree (cFileTokenizerFromBytes bp bn np nn tp tn (specialFlags sp))

withFileTok :: FileTokenizer -> (Ptr TurnfitFileTokenizer -> IO a) -> IO a
withFileTok (FileTokenizer fp) = withForeignPtr fp

-- | @{"name", "vocab_size", "special_tokens", "add_special", "context_length", "pre", "has_chat_template"}@.
fileTokenizerInfo :: FileTokenizer -> IO Value
fileTokenizerInfo t = withFileTok t $ \tp -> withOutJson (cFileTokenizerInfo tp)

-- | The number of tokens of a text, without BOS/EOS.
fileCountTokens :: FileTokenizer -> Text -> IO Int
fileCountTokens t s = withFileTok t $ \tp -> withText s $ \p n -> alloca $ \out -> do
  check (cFileTokenizerCount tp p n out)
  fromIntegral <$> peek out

-- | The ids of a text; with 'True', the file's BOS/EOS around them.
fileEncode :: FileTokenizer -> Bool -> Text -> IO [Word32]
fileEncode t addSpecial s = withFileTok t $ \tp -> withText s $ \p n ->
  withOutTokens (cFileTokenizerEncode tp p n (if addSpecial then kFileTokenizerAddSpecial else 0))

-- | The text of ids through the file's decoder; UNKNOWN_TOKEN for an id the file lacks.
fileDecode :: FileTokenizer -> [Word32] -> IO Text
fileDecode t ids = withFileTok t $ \tp -> withArrayLen ids $ \n ip ->
  withOutText (cFileTokenizerDecode tp ip (fromIntegral n))

-- ---------------------------------------------------------------------------
-- Registry

-- | Model profiles: the built-in table plus the host's own entries.
newtype Registry = Registry (ForeignPtr TurnfitRegistry)

withRegistry :: Maybe Registry -> (Ptr TurnfitRegistry -> IO a) -> IO a
withRegistry Nothing k = k nullPtr
withRegistry (Just (Registry fp)) k = withForeignPtr fp k

newRegistry :: IO Registry
newRegistry = Registry <$> newHandle pRegistryFree cRegistryNew

-- | Registers profiles (docs/formats.md); returns how many were registered.
registryRegister :: Registry -> Value -> IO Int
registryRegister r v = withRegistry (Just r) $ \rp -> withJson v $ \p n -> alloca $ \out -> do
  check (cRegistryRegister rp p n out)
  fromIntegral <$> peek out

-- | Registers one model profile (an object, as for 'registryRegister') with
-- the host's own counter, for a model whose tokenizer is not public (issue
-- 34; the C @turnfit_registry_register_counter@): every window made for that
-- model from this registry counts text with @count@ (framing stays the
-- model's). @count@ runs on the thread of the counting call, possibly on
-- several at once; an exception it throws or a negative result fails that
-- call with status 3 (@INVALID_ARGUMENT@) naming the model, as does a count
-- above the text's bytes plus 64. It must not call turnfit: such a call
-- throws (the library refuses it). Registering the name again replaces it;
-- the function pointer is released when the library lets the counter go.
registryRegisterCounter :: Registry -> Value -> (Text -> IO Int) -> IO ()
registryRegisterCounter r profile count = withRegistry (Just r) $ \rp -> withJson profile $ \p n -> mask_ $ do
  f <- mkCountFn (countCallback count)
  -- On failure the library keeps nothing and calls no release: ours to free.
  check (cRegistryRegisterCounter rp p n f (castFunPtrToPtr f) pFreeCounter) `onException` freeHaskellFunPtr f

foreign import ccall "&turnfit_hs_free_counter"
  pFreeCounter :: FunPtr FreeUserDataFn

-- | The C side of a host counter: the text is copied before @count@ sees it
-- (the library's buffer lives for the call only); any exception (also an
-- asynchronous one) becomes a non-zero return with its text as the message,
-- so none unwinds into Rust.
countCallback :: (Text -> IO Int) -> CountFn
countCallback count _ p n out msg cap =
  (do
      t <- TE.decodeUtf8 <$> B.packCStringLen (p, fromIntegral n)
      k <- count t >>= evaluate
      if k < 0
        then failWith ("it returned " <> show k <> ", not a non-negative count")
        else poke out (fromIntegral k) >> pure 0)
    `catch` \(e :: SomeException) -> failWith (displayException e)
  where
    failWith why = do
      let bs = B.take (fromIntegral cap - 1) (TE.encodeUtf8 (T.pack why))
      when (cap > 0) $ BU.unsafeUseAsCStringLen bs $ \(src, len) -> do
        copyBytes msg src len
        pokeByteOff msg len (0 :: Word8)
      pure 1

-- | Registers a model known by its own files (issue 50; the C
-- @turnfit_registry_register_model_files@): @spec@ is
-- @{"name", "tokenizer": path, "chat_template"?: source, "context_window": n,
-- "max_output_tokens"?, "template_kwargs"?, "pattern"?}@
-- (docs/formats.md). The tokenizer file (an HF @tokenizer.json@, a GGUF, a
-- tiktoken or Tekken file) is read once; the template is the one beside it
-- (or inside the GGUF) unless given. Then every fit, turn and window for
-- that name from this registry reports the template's own count
-- (@exact: true@), as a server such as Ollama, llama.cpp or vLLM counts the
-- prompt. Returns the entry, as 'registryLookup' does. Registering the name
-- again replaces it; a file that cannot be read throws status 10 (@IO@), a
-- template that cannot be rendered status 3 naming its construct.
registryRegisterModelFiles :: Registry -> Value -> IO Value
registryRegisterModelFiles r spec = withRegistry (Just r) $ \rp -> withJson spec $ \p n ->
  withOutJson (cRegistryRegisterModelFiles rp p n)

registryLookup :: Maybe Registry -> Text -> Maybe Text -> IO Value
registryLookup r model fallback = withRegistry r $ \rp -> withText model $ \p n ->
  withMaybeText fallback $ \fp fnl -> withOutJson (cRegistryLookup rp p n fp fnl)

registryList :: Maybe Registry -> IO Value
registryList r = withRegistry r $ \rp -> withOutJson (cRegistryList rp)

-- ---------------------------------------------------------------------------
-- Window

-- | A conversation bound to a model and a budget. Calls on one window are
-- serialized by the library.
newtype Window = Window (ForeignPtr TurnfitWindow)

withWin :: Window -> (Ptr TurnfitWindow -> IO a) -> IO a
withWin (Window fp) = withForeignPtr fp

-- | An empty window for a model, with an optional budget object.
newWindow :: Maybe Registry -> Text -> Maybe Value -> IO Window
newWindow r model budget = withRegistry r $ \rp -> withText model $ \mp mn ->
  withMaybeJson budget $ \bp bn -> Window <$> newHandle pWindowFree (cWindowNew rp mp mn bp bn)

windowLoad :: Window -> Value -> IO ()
windowLoad w conv = withWin w $ \wp -> withJson conv $ \p n -> check (cWindowLoad wp p n)

-- | Appends one message; returns its token count.
windowPush :: Window -> Value -> IO Int
windowPush w msg = withWin w $ \wp -> withJson msg $ \p n -> alloca $ \out -> do
  check (cWindowPush wp p n out)
  fromIntegral <$> peek out

windowPreflight :: Window -> Maybe Value -> IO Value
windowPreflight w new = withWin w $ \wp -> withMaybeJson new $ \p n -> withOutJson (cWindowPreflight wp p n)

windowPreflightE :: Window -> Maybe Value -> IO (Either TurnfitError Value)
windowPreflightE w new = try (windowPreflight w new)

-- | Records the prompt tokens the provider billed for the window's current
-- conversation; returns the factor reported / counted. Estimated models
-- scale later pre-flights by it; exact ones only report the discrepancy.
windowCalibrate :: Window -> Word64 -> IO Double
windowCalibrate w reported = withWin w $ \wp -> alloca $ \out -> do
  check (cWindowCalibrate wp reported out)
  realToFrac <$> (peek out :: IO CDouble)

windowValidate :: Window -> IO Value
windowValidate w = withWin w $ \wp -> withOutJson (cWindowValidate wp)

-- | Repairs in place; the argument is the text of inserted results
-- (Nothing: the default).
windowRepair :: Window -> Maybe Text -> IO Value
windowRepair w synth = withWin w $ \wp -> withMaybeText synth $ \p n -> withOutJson (cWindowRepair wp p n)

windowConversation :: Window -> IO Value
windowConversation w = withWin w $ \wp -> withOutJson (cWindowConversation wp)

-- | Compacts under a policy (Nothing: defaults). The result is
-- @{"status": "done", "report"}@ or @{"status": "needs_summary", "request"}@;
-- for the latter, summarize @request.prompt@ and call 'windowApplySummary'.
windowCompact :: Window -> Maybe Value -> IO Value
windowCompact w policy = withWin w $ \wp -> withMaybeJson policy $ \p n -> withOutJson (cWindowCompact wp p n)

windowCompactE :: Window -> Maybe Value -> IO (Either TurnfitError Value)
windowCompactE w p = try (windowCompact w p)

-- | Completes a pending summarize compaction: request id, summary text.
windowApplySummary :: Window -> Text -> Text -> IO Value
windowApplySummary w rid summary = withWin w $ \wp -> withText rid $ \ip iN ->
  withText summary $ \sp sn -> withOutJson (cWindowApplySummary wp ip iN sp sn)

-- | Stateless fit: conversation and options in, (conversation, report) out.
-- Models resolve in the built-in table; 'fitIn' takes a registry.
fit :: Value -> Value -> IO (Value, Value)
fit = fitIn Nothing

-- | 'fit' with models resolved in a registry (Nothing: the built-in table),
-- so a model registered there, with its host counter
-- ('registryRegisterCounter') if it has one, counts the request.
fitIn :: Maybe Registry -> Value -> Value -> IO (Value, Value)
fitIn reg conv opts = withRegistry reg $ \rp -> withJson conv $ \cp cn -> withJson opts $ \op on ->
  alloca $ \outC -> alloca $ \outR -> do
    poke outC (TurnfitString nullPtr 0)
    poke outR (TurnfitString nullPtr 0)
    check (cFit rp cp cn op on outC outR)
    -- Both buffers are owned from here: the second is freed even if the
    -- first does not decode.
    c <- consumeOwnedString outC decodeJson `onException` cStringFree outR
    r <- consumeOwnedString outR decodeJson
    pure (c, r)

-- | 'fit' over JSON text as bytes, passed through untouched: key order and
-- number spelling stay as written (summary ids hash the input as written),
-- and malformed JSON reaches the library (INVALID_JSON, with its location).
fitBytes :: B.ByteString -> B.ByteString -> IO (B.ByteString, B.ByteString)
fitBytes conv opts = withBytes conv $ \cp cn -> withBytes opts $ \op on ->
  alloca $ \outC -> alloca $ \outR -> do
    poke outC (TurnfitString nullPtr 0)
    poke outR (TurnfitString nullPtr 0)
    check (cFit nullPtr cp cn op on outC outR)
    mask_ ((,) <$> takeOwnedString outC <*> takeOwnedString outR)

-- | 'windowLoad' over JSON text as bytes (see 'fitBytes').
windowLoadBytes :: Window -> B.ByteString -> IO ()
windowLoadBytes w conv = withWin w $ \wp -> withBytes conv $ \p n -> check (cWindowLoad wp p n)

-- | 'windowPush' over one message's JSON text as bytes (see 'fitBytes'): the
-- message is kept as written, so a later summary id over it matches the one
-- the CLI or another binding gets for the same text.
windowPushBytes :: Window -> B.ByteString -> IO Int
windowPushBytes w msg = withWin w $ \wp -> withBytes msg $ \p n -> alloca $ \out -> do
  check (cWindowPush wp p n out)
  fromIntegral <$> peek out

fitE :: Value -> Value -> IO (Either TurnfitError (Value, Value))
fitE c o = try (fit c o)

-- ---------------------------------------------------------------------------
-- Turns

-- | The host's model as a summarizer: gets the request (@prompt@, @model@,
-- @max_summary_tokens@, @piece@/@pieces@, @timeout_ms@, ...;
-- schemas/summarizer-call.json) and returns the summary text.
type Summarizer = Value -> IO Text

-- | One agent turn: the request to send now (repaired, within the budget, in
-- the input's shape) and the turn report, with the host's model summarizing
-- when the policy says so (@policy.strategy: "summarize"@). Drives
-- @turnfit_turn_start@ / @_call@ / @_resume@ / @_finish@: each summarizer
-- request runs under 'timeout' for its @timeout_ms@. A summarizer that
-- throws, takes too long, or returns blank, far too long or invalid text
-- never fails the turn: the deterministic digest stands in and
-- @report.summary.fallback.reason@ says why. 'Left' only for turnfit's own
-- errors (@DOES_NOT_FIT@ when the system prompt, tools, task, newest user
-- message and pins alone exceed the budget; bad JSON; unknown models).
-- Asynchronous exceptions (a 'killThread', Ctrl-C) are not swallowed.
fitTurn :: Value -> Value -> Summarizer -> IO (Either TurnfitError (Value, Value))
fitTurn conv opts summarize = try $ withJson conv $ \cp cn -> withJson opts $ \op on ->
  bracket (start cp cn op on) cTurnFree $ \t -> driveTurn summarize t >> finish t
  where
    start cp cn op on = alloca $ \tp -> do
      poke tp nullPtr
      check (cTurnStart nullPtr cp cn op on tp)
      peek tp
    finish t = alloca $ \outC -> alloca $ \outR -> do
      poke outC (TurnfitString nullPtr 0)
      poke outR (TurnfitString nullPtr 0)
      check (cTurnFinish t outC outR)
      c <- consumeOwnedString outC decodeJson `onException` cStringFree outR
      r <- consumeOwnedString outR decodeJson
      pure (c, r)

-- | One turn on a window, the stateful 'fitTurn' (@turnfit_window_turn_*@):
-- below the trigger it answers from the counts kept as messages were pushed
-- (nothing recounted, nothing changed, @fired: false@); over it, the window
-- compacts with the summarizer writing the summary and takes the result
-- ('windowConversation' is then the request to send). Returns the turn
-- report. The options hold @policy@, @summarizer@ and @trigger_messages@;
-- the window's model and budget are its own ('Left' @INVALID_ARGUMENT@ when
-- the options set them, or when the window changed while the summarizer ran:
-- nothing is applied then). The window is not locked while the summarizer
-- runs, so it may read or push to the window.
windowFitTurn :: Window -> Value -> Summarizer -> IO (Either TurnfitError Value)
windowFitTurn w opts summarize = try $ withJson opts $ \op on ->
  bracket (withWin w (start op on)) cTurnFree $ \t -> driveTurn summarize t >> withWin w (finish t)
  where
    start op on wp = alloca $ \tp -> do
      poke tp nullPtr
      check (cWindowTurnStart nullPtr wp op on tp)
      peek tp
    finish t wp = alloca $ \outR -> do
      poke outR (TurnfitString nullPtr 0)
      check (cWindowTurnFinish wp t outR)
      consumeOwnedString outR decodeJson

-- | Answers each summarizer request of a turn (either kind): each runs
-- under 'timeout' for its @timeout_ms@; a throw, a timeout or bad text is
-- handed back as a failure (the digest stands in). Asynchronous exceptions
-- are rethrown.
driveTurn :: Summarizer -> Ptr TurnfitTurn -> IO ()
driveTurn summarize t = loop
  where
    waiting = alloca $ \wp -> alloca $ \sp -> do
      poke sp (TurnfitString nullPtr 0)
      check (cTurnCall t wp sp)
      CBool w <- peek wp
      consumeOwnedString sp $ \bs -> if w /= 0 then Just <$> decodeJson bs else pure Nothing
    loop = waiting >>= \case
      Nothing -> pure ()
      Just req -> do
        let ms = case req of
              A.Object o | Just (A.Number n) <- KM.lookup "timeout_ms" o -> truncate n :: Integer
              _ -> 0
            limit act
              | ms <= 0 = Just <$> act
              | otherwise = timeout (fromInteger (min ms (toInteger (maxBound :: Int) `div` 1000)) * 1000) act
        r <- try (limit (summarize req >>= evaluate . force))
        case r of
          Left (e :: SomeException)
            | Just (_ :: SomeAsyncException) <- fromException e -> throwIO e
            | otherwise -> resume kSummaryError "" (T.pack (displayException e))
          Right Nothing -> resume kSummaryTimeout "" (T.pack ("no reply within " ++ show ms ++ " ms; abandoned"))
          Right (Just txt) -> resume kSummaryOk txt ""
        loop
    resume code txt msg = withText txt $ \tp tn -> withText msg $ \mp mn -> check (cTurnResume t code tp tn mp mn)

-- ---------------------------------------------------------------------------
-- Assembly and tool sets

assemble :: Tokenizer -> Value -> IO Value
assemble t req = withTok t $ \tp -> withJson req $ \p n -> withOutJson (cAssemble tp p n)

-- | 'assemble' over the request's JSON text as bytes, passed through
-- untouched; the result is the library's JSON text. Key order is part of a
-- request: the sections of a @context@ object render in the order written,
-- and a JSON section text is rendered with its keys in that order, which
-- 'assemble' (through aeson's 'Value', whose objects sort their keys) cannot
-- express.
assembleBytes :: Tokenizer -> B.ByteString -> IO B.ByteString
assembleBytes t req = withTok t $ \tp -> withBytes req $ \p n -> withOutString (cAssemble tp p n)

toolsetReport :: Maybe Registry -> Value -> IO Value
toolsetReport r req = withRegistry r $ \rp -> withJson req $ \p n -> withOutJson (cToolsetReport rp p n)

toolsetSelect :: Value -> Text -> IO Value
toolsetSelect req agent = withJson req $ \p n -> withText agent $ \ap an -> withOutJson (cToolsetSelect p n ap an)

-- ---------------------------------------------------------------------------
-- Skills

newtype Skills = Skills (ForeignPtr TurnfitSkills)

withSkills :: Skills -> (Ptr TurnfitSkills -> IO a) -> IO a
withSkills (Skills fp) = withForeignPtr fp

-- | Opens a skills folder (a path) with optional open options.
openSkills :: Text -> Maybe Value -> IO Skills
openSkills root opts = withText root $ \rp rn -> withMaybeJson opts $ \op on ->
  Skills <$> newHandle pSkillsFree (cSkillsOpen rp rn op on)

-- | 'openSkills' with an options @model@ looked up in a registry
-- (@turnfit_skills_open_in@; 'Nothing' is the built-in table).
openSkillsIn :: Maybe Registry -> Text -> Maybe Value -> IO Skills
openSkillsIn r root opts = withRegistry r $ \gp -> withText root $ \rp rn -> withMaybeJson opts $ \op on ->
  Skills <$> newHandle pSkillsFree (cSkillsOpenIn gp rp rn op on)

skillsList :: Skills -> IO Value
skillsList s = withSkills s $ \sp -> withOutJson (cSkillsList sp)

skillsBody :: Skills -> Text -> IO Value
skillsBody s name = withSkills s $ \sp -> withText name $ \p n -> withOutJson (cSkillsBody sp p n)

skillsRenderIndex :: Skills -> Maybe Value -> IO Value
skillsRenderIndex s opts = withSkills s $ \sp -> withMaybeJson opts $ \p n -> withOutJson (cSkillsRenderIndex sp p n)

-- ---------------------------------------------------------------------------
-- Handoffs

handoffValidate :: Value -> IO Value
handoffValidate h = withJson h $ \p n -> withOutJson (cHandoffValidate p n)

handoffRender :: Value -> Maybe Value -> IO Value
handoffRender h opts = withJson h $ \p n -> withMaybeJson opts $ \op on -> withOutJson (cHandoffRender p n op on)

-- | 'handoffRender' with an options @model@ looked up in a registry
-- (@turnfit_handoff_render_in@; 'Nothing' is the built-in table).
handoffRenderIn :: Maybe Registry -> Value -> Maybe Value -> IO Value
handoffRenderIn r h opts = withRegistry r $ \rp -> withJson h $ \p n -> withMaybeJson opts $ \op on ->
  withOutJson (cHandoffRenderIn rp p n op on)

handoffFilter :: Value -> Maybe Value -> IO Value
handoffFilter conv opts = withJson conv $ \p n -> withMaybeJson opts $ \op on -> withOutJson (cHandoffFilter p n op on)

-- | The handoff calls over JSON text as bytes, passed through untouched; the
-- results are the library's JSON text. Key order is part of a handoff: custom
-- fields render in the order written and, under a budget, are dropped last
-- first, which the 'Value' variants (aeson sorts object keys) cannot express.
handoffValidateBytes :: B.ByteString -> IO B.ByteString
handoffValidateBytes h = withBytes h $ \p n -> withOutString (cHandoffValidate p n)

handoffRenderBytes :: B.ByteString -> Maybe B.ByteString -> IO B.ByteString
handoffRenderBytes h opts = withBytes h $ \p n -> withMaybeBytes opts $ \op on -> withOutString (cHandoffRender p n op on)

-- | 'handoffRenderBytes' with an options @model@ looked up in a registry.
handoffRenderInBytes :: Maybe Registry -> B.ByteString -> Maybe B.ByteString -> IO B.ByteString
handoffRenderInBytes r h opts = withRegistry r $ \rp -> withBytes h $ \p n -> withMaybeBytes opts $ \op on ->
  withOutString (cHandoffRenderIn rp p n op on)

-- | 'handoffFilter' over the conversation's JSON text (messages kept as
-- written).
handoffFilterBytes :: B.ByteString -> Maybe B.ByteString -> IO B.ByteString
handoffFilterBytes conv opts = withBytes conv $ \p n -> withMaybeBytes opts $ \op on -> withOutString (cHandoffFilter p n op on)

-- ---------------------------------------------------------------------------
-- Recovery

-- | Classifies a provider error: provider name, HTTP status (0: no
-- response), body (Nothing: none), headers object (Nothing: none).
classifyError :: Text -> Word32 -> Maybe Text -> Maybe Value -> IO Value
classifyError provider st body headers = withText provider $ \pp pn ->
  withMaybeText body $ \bp bn -> withMaybeJson headers $ \hp hn ->
    withOutJson (cRecoveryClassify pp pn st bp bn hp hn)

-- | 'classifyError' with the error's context (document 000's
-- @ErrorContext@): an object of @agent_id@, @workflow_id@ and @metadata@,
-- each optional, echoed in the classification's fields of the same names
-- (@turnfit_recovery_classify_in@). An empty id is 'statusInvalidArgument'.
classifyErrorIn :: Text -> Word32 -> Maybe Text -> Maybe Value -> Value -> IO Value
classifyErrorIn provider st body headers ctx = withText provider $ \pp pn ->
  withMaybeText body $ \bp bn -> withMaybeJson headers $ \hp hn -> withJson ctx $ \cp cn ->
    withOutJson (cRecoveryClassifyIn pp pn st bp bn hp hn cp cn)

-- | The retry decision after a failure (docs/formats.md, "Backoff").
backoff :: Value -> IO Value
backoff req = withJson req $ \p n -> withOutJson (cRecoveryBackoff p n)

-- | Circuit breakers, one per key.
newtype Breaker = Breaker (ForeignPtr TurnfitBreaker)

withBreaker :: Breaker -> (Ptr TurnfitBreaker -> IO a) -> IO a
withBreaker (Breaker fp) = withForeignPtr fp

newBreaker :: Maybe Value -> IO Breaker
newBreaker cfg = withMaybeJson cfg $ \p n -> Breaker <$> newHandle pBreakerFree (cBreakerNew p n)

-- | Whether a call for the key may go ahead at @now_ms@.
breakerAllow :: Breaker -> Text -> Word64 -> IO Bool
breakerAllow b key now = withBreaker b $ \bp -> withText key $ \p n -> alloca $ \out -> do
  check (cBreakerAllow bp p n now out)
  (\(CBool x) -> x /= 0) <$> peek out

-- | The state of one key's breaker (@turnfit_breaker_phase@; the @state@
-- field of 'breakerState': @closed@, @open@, @half_open@).
data BreakerState = BreakerClosed | BreakerOpen | BreakerHalfOpen deriving (Eq, Ord, Show, Enum, Bounded)

-- | The name 'breakerState' reports in its @state@ field.
breakerStateName :: BreakerState -> Text
breakerStateName BreakerClosed = "closed"
breakerStateName BreakerOpen = "open"
breakerStateName BreakerHalfOpen = "half_open"

-- | Records a success of a call under the key at @now_ms@ and returns the
-- key's state after it, read under the same lock as the update
-- (@turnfit_breaker_record_success_state@): a success while half-open closes
-- the breaker once @success_threshold@ probes have succeeded.
breakerRecordSuccess :: Breaker -> Text -> Word64 -> IO BreakerState
breakerRecordSuccess = recordWith cBreakerRecordSuccessState

-- | Records a failure and returns the key's state after it
-- (@turnfit_breaker_record_failure_state@): @failure_threshold@ consecutive
-- failures, or one failed probe while half-open, open the breaker.
breakerRecordFailure :: Breaker -> Text -> Word64 -> IO BreakerState
breakerRecordFailure = recordWith cBreakerRecordFailureState

-- | 'breakerRecordFailure' for a call made by the agent in the workflow the
-- context names (@{"agent_id", "workflow_id", "metadata"}@): the failure is
-- also counted under both ids (see 'breakerFailureCounts').
breakerRecordFailureIn :: Breaker -> Text -> Value -> Word64 -> IO BreakerState
breakerRecordFailureIn b key ctx now = withJson ctx $ \cp cn ->
  recordWith (\bp p n t out e -> cBreakerRecordFailureIn bp p n cp cn t out e) b key now

-- | Failures recorded with 'breakerRecordFailureIn', per agent and per
-- workflow: @{"by_agent", "by_workflow", "unattributed"}@.
breakerFailureCounts :: Breaker -> IO Value
breakerFailureCounts b = withBreaker b $ \bp -> withOutJson (cBreakerFailureCounts bp)

recordWith ::
  (Ptr TurnfitBreaker -> CString -> CSize -> Word64 -> Ptr Word32 -> Ptr (Ptr R.TurnfitError) -> IO Word32) ->
  Breaker -> Text -> Word64 -> IO BreakerState
recordWith call b key now = withBreaker b $ \bp -> withText key $ \p n -> alloca $ \out -> do
  check (call bp p n now out)
  phase <- peek out
  case phase of
    _ | phase == kBreakerPhaseClosed -> pure BreakerClosed
      | phase == kBreakerPhaseOpen -> pure BreakerOpen
      | phase == kBreakerPhaseHalfOpen -> pure BreakerHalfOpen
      | otherwise -> throwIO (TurnfitError kStatusInternal (T.pack ("unknown turnfit_breaker_phase " ++ show phase)))

breakerState :: Breaker -> Text -> Word64 -> IO Value
breakerState b key now = withBreaker b $ \bp -> withText key $ \p n -> withOutJson (cBreakerState bp p n now)

-- ---------------------------------------------------------------------------
-- Call stacks

-- | An immutable agent call stack; 'callStackEnter' returns a new one.
newtype CallStack = CallStack (ForeignPtr TurnfitCallstack)

withStack :: CallStack -> (Ptr TurnfitCallstack -> IO a) -> IO a
withStack (CallStack fp) = withForeignPtr fp

-- | The library's default maximum depth (@TURNFIT_CALLSTACK_DEFAULT_MAX_DEPTH@,
-- 5), for 'newCallStack'.
defaultCallStackDepth :: Int
defaultCallStackDepth = fromIntegral kCallstackDefaultMaxDepth

-- | An empty stack of the given maximum depth; 0 is INVALID_ARGUMENT since
-- ABI 2 (as @{"max_depth": 0}@ is for 'callStackFromJson'), so ask for
-- 'defaultCallStackDepth' by name.
newCallStack :: Int -> IO CallStack
newCallStack d = CallStack <$> newHandle pCallstackFree (cCallstackNew (fromIntegral d))

callStackFromJson :: Value -> IO CallStack
callStackFromJson v = withJson v $ \p n -> CallStack <$> newHandle pCallstackFree (cCallstackFromJson p n)

-- | Enters an agent; throws CYCLE_DETECTED or DEPTH_EXCEEDED with the chain.
callStackEnter :: CallStack -> Text -> IO CallStack
callStackEnter s agent = withStack s $ \sp -> withText agent $ \p n ->
  CallStack <$> newHandle pCallstackFree (cCallstackEnter sp p n)

callStackEnterE :: CallStack -> Text -> IO (Either TurnfitError CallStack)
callStackEnterE s a = try (callStackEnter s a)

callStackToJson :: CallStack -> IO Value
callStackToJson s = withStack s $ \sp -> withOutJson (cCallstackToJson sp)

-- ---------------------------------------------------------------------------
-- Tracer

newtype Tracer = Tracer (ForeignPtr TurnfitTracer)

withTracer :: Tracer -> (Ptr TurnfitTracer -> IO a) -> IO a
withTracer (Tracer fp) = withForeignPtr fp

data SpanOutcome = SpanSuccess | SpanFailed | SpanTimeout | SpanCancelled deriving (Eq, Show)

newTracer :: Maybe Value -> IO Tracer
newTracer cfg = withMaybeJson cfg $ \p n -> Tracer <$> newHandle pTracerFree (cTracerNew p n)

-- | Starts a span: tool, info object, input bytes, now (µs). Returns its id.
tracerStart :: Tracer -> Text -> Maybe Value -> Word64 -> Word64 -> IO Word64
tracerStart t tool info inBytes now = withTracer t $ \tp -> withText tool $ \p n ->
  withMaybeJson info $ \ip iN -> alloca $ \out -> do
    check (cTracerStart tp p n ip iN inBytes now out)
    peek out

-- | Ends a span: id, outcome, output bytes, error text, now (µs).
tracerEnd :: Tracer -> Word64 -> SpanOutcome -> Word64 -> Maybe Text -> Word64 -> IO ()
tracerEnd t sid outcome outBytes err now = withTracer t $ \tp -> withMaybeText err $ \ep en ->
  check (cTracerEnd tp sid o outBytes ep en now)
  where
    o = case outcome of
      SpanSuccess -> kSpanOutcomeSuccess
      SpanFailed -> kSpanOutcomeFailed
      SpanTimeout -> kSpanOutcomeTimeout
      SpanCancelled -> kSpanOutcomeCancelled

-- | Ends a span with an end object: @{"output_bytes", "error",
-- "error_category", "input_tokens", "output_tokens", "metadata"}@ (token
-- usage and categories are summed per tool; metadata stays on the record).
tracerEndWith :: Tracer -> Word64 -> SpanOutcome -> Maybe Value -> Word64 -> IO ()
tracerEndWith t sid outcome end now = withTracer t $ \tp -> withMaybeJson end $ \ep en ->
  check (cTracerEndWith tp sid (spanOutcomeCode outcome) ep en now)

spanOutcomeCode :: SpanOutcome -> Word32
spanOutcomeCode o = case o of
  SpanSuccess -> kSpanOutcomeSuccess
  SpanFailed -> kSpanOutcomeFailed
  SpanTimeout -> kSpanOutcomeTimeout
  SpanCancelled -> kSpanOutcomeCancelled

tracerOverdue, tracerExpire, tracerExport :: Tracer -> Word64 -> IO Value
tracerOverdue t now = withTracer t $ \tp -> withOutJson (cTracerOverdue tp now)
tracerExpire t now = withTracer t $ \tp -> withOutJson (cTracerExpire tp now)
tracerExport t now = withTracer t $ \tp -> withOutJson (cTracerExport tp now)

-- ---------------------------------------------------------------------------
-- Events

-- | An event a handle raised (docs/formats.md, "Events"): the kind's name
-- (@compacted@, @repaired@, @budget_crossed@, @breaker_state_changed@,
-- @span_repeated@, @span_overdue@, @skill_skipped@, @span_finished@) and the JSON payload
-- (which repeats the name as its @kind@ field).
data Event = Event {eventKind :: !Text, eventPayload :: !Value} deriving (Eq, Show)

-- | Wraps a handler as a C callback. The payload is only valid during the
-- call, so it is decoded in place and the 'Value' forced to normal form
-- before the handler runs (no copy, and nothing the handler keeps can
-- point into the library's buffer). Any exception
-- the handler throws (synchronous or asynchronous) is caught and dropped
-- here, so none ever unwinds into Rust; a handler that must report failure
-- should do it itself (an 'IORef', a 'Control.Concurrent.MVar').
eventCallback :: (Event -> IO ()) -> IO (FunPtr EventCallback)
eventCallback handler = mkEventCallback $ \_ kind p n ->
  (do
      bs <- BU.unsafePackCStringLen (p, fromIntegral n)
      name <- cEventKindName kind >>= peekCString
      case A.decodeStrict' bs of
        Just v -> evaluate (force v) >>= handler . Event (T.pack name)
        Nothing -> pure ())
    `catch` \(_ :: SomeException) -> pure ()

foreign import ccall "&turnfit_hs_free_event_callback"
  pFreeEventCallback :: FinalizerEnvPtr () a

-- | Sets a handler on a handle through its setter. The 'FunPtr' is released
-- by a finalizer of the handle (GHC runs it when the handle is collected,
-- before the handle's @_free@; no call can be under way then), so a handle
-- never calls a freed pointer. A replaced handler is released with the
-- handle too, not at once: a call on another thread may still be using it.
setEvents ::
  ForeignPtr h ->
  (Ptr h -> FunPtr EventCallback -> Ptr () -> Ptr (Ptr R.TurnfitError) -> IO Word32) ->
  Maybe (Event -> IO ()) ->
  IO ()
setEvents fp setter Nothing = withForeignPtr fp $ \hp -> check (setter hp nullFunPtr nullPtr)
setEvents fp setter (Just handler) = mask_ $ do
  f <- eventCallback handler
  addForeignPtrFinalizerEnv pFreeEventCallback (castFunPtrToPtr f) fp
  withForeignPtr fp $ \hp -> check (setter hp f nullPtr)

-- | Sets (or, with 'Nothing', clears) the window's event handler:
-- @compacted@, @repaired@, @budget_crossed@. It runs on the calling thread,
-- during the call that raised the event, and may call back into the window.
onWindowEvents :: Window -> Maybe (Event -> IO ()) -> IO ()
onWindowEvents (Window fp) = setEvents fp cWindowSetEventCallback

-- | Sets (or clears) the breaker's event handler: @breaker_state_changed@.
onBreakerEvents :: Breaker -> Maybe (Event -> IO ()) -> IO ()
onBreakerEvents (Breaker fp) = setEvents fp cBreakerSetEventCallback

-- | Sets (or clears) the tracer's event handler: @span_repeated@,
-- @span_overdue@, and @span_finished@ for every span that ends when the
-- tracer was made with @{"span_finished_events": true}@ (its payload is the
-- execution's record: "Turnfit.Records".'SpanRecord').
onTracerEvents :: Tracer -> Maybe (Event -> IO ()) -> IO ()
onTracerEvents (Tracer fp) = setEvents fp cTracerSetEventCallback

-- | 'openSkills', calling the handler once per skipped entry
-- (@skill_skipped@) before it returns. The callback lives for this call only.
openSkillsWithEvents :: Text -> Maybe Value -> (Event -> IO ()) -> IO Skills
openSkillsWithEvents root opts handler =
  bracket (eventCallback handler) freeHaskellFunPtr $ \f ->
    withText root $ \rp rn -> withMaybeJson opts $ \op on ->
      Skills <$> newHandle pSkillsFree (cSkillsOpenWithEvents rp rn op on f nullPtr)
