-- | Times counting from Haskell on the inputs named on the command line
-- (file paths, or literal:TEXT), with the same loop as rust/src/main.rs:
-- calls repeated until at least 1 s has passed, best of 3 rounds, ns/call.
-- Two ways: countTokensIO (Text in: UTF-8 encoding + safe call), and
-- Turnfit.Raw with a pre-encoded ByteString and a safe call (the FFI cost
-- alone). The pure countTokens is the same call as countTokensIO; it is
-- not timed in a loop because GHC may share its result.
module Main (main) where

import Control.Monad (forM_, replicateM_, unless)
import qualified Data.ByteString as B
import qualified Data.ByteString.Unsafe as BU
import Data.IORef
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import qualified Data.Text.IO as TIO
import Data.Time.Clock (diffUTCTime, getCurrentTime)
import Foreign.Marshal.Alloc (alloca)
import Foreign.Ptr (castPtr, nullPtr)
import Foreign.Storable (peek)
import System.Environment (getArgs)
import Text.Printf (printf)

import Turnfit
import qualified Turnfit.Raw as R

timeIt :: IO () -> IO Double
timeIt act = do
  best <- newIORef (1 / 0)
  replicateM_ 3 $ do
    start <- getCurrentTime
    calls <- newIORef (0 :: Int)
    let loop = do
          replicateM_ 16 act
          modifyIORef' calls (+ 16)
          now <- getCurrentTime
          unless (realToFrac (diffUTCTime now start) >= (1.0 :: Double)) loop
    loop
    end <- getCurrentTime
    n <- readIORef calls
    modifyIORef' best (min (realToFrac (diffUTCTime end start) * 1e9 / fromIntegral n))
  readIORef best

main :: IO ()
main = do
  args <- getArgs
  t <- newTokenizer (T.pack "o200k_base")
  forM_ args $ \a -> do
    text <- case T.stripPrefix (T.pack "literal:") (T.pack a) of
      Just lit -> pure lit
      Nothing -> TIO.readFile a
    let bytes = TE.encodeUtf8 text
    n <- countTokensIO t text
    viaText <- timeIt (countTokensIO t text >>= \k -> k `seq` pure ())
    viaRaw <- timeIt (rawCount t bytes >>= \k -> k `seq` pure ())
    let row :: String -> Double -> IO ()
        row how ns = printf "%s\t%s\t%d\t%d\t%.0f\n" how a (B.length bytes) n ns
    row "haskell-text" viaText
    row "haskell-raw" viaRaw
  where
    rawCount t bytes = withTokenizerPtr t $ \tp -> BU.unsafeUseAsCStringLen bytes $ \(p, len) ->
      alloca $ \out -> do
        rc <- R.cTokenizerCount tp (castPtr p) (fromIntegral len) out nullPtr
        unless (rc == 0) (fail "count failed")
        peek out
