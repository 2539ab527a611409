-- | Times taking a large result from the library (decodeBytes, o200k_base)
-- on the inputs named on the command line (file paths, or literal:TEXT):
-- the bytes adopted as they are (what decodeBytes does since ABI 2, through
-- turnfit_string_free_parts), and the same result copied once more into GHC's
-- heap (B.copy), which is what every result cost before: a copy, then the
-- library's buffer freed. Same loop as Count.hs: calls repeated until at
-- least 1 s has passed, best of 3 rounds, ns per call. The ids are
-- marshalled in both rows alike.
module Main (main) where

import Control.Exception (evaluate)
import Control.Monad (forM_, replicateM_, unless)
import qualified Data.ByteString as B
import Data.IORef
import qualified Data.Text as T
import qualified Data.Text.Encoding as TE
import qualified Data.Text.IO as TIO
import Data.Time.Clock (diffUTCTime, getCurrentTime)
import System.Environment (getArgs)
import Text.Printf (printf)

import Turnfit

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
  printf "how\tinput\tbytes\ttokens\tns/call\n"
  forM_ args $ \a -> do
    text <- case T.stripPrefix (T.pack "literal:") (T.pack a) of
      Just lit -> pure lit
      Nothing -> TIO.readFile a
    let bytes = TE.encodeUtf8 text
    ids <- encodeTokensIO t text
    _ <- evaluate (sum ids)
    out <- decodeBytes t ids
    unless (out == bytes) (fail (a ++ ": decodeBytes does not give the input back"))
    adopted <- timeIt (decodeBytes t ids >>= evaluate . B.length >>= \k -> k `seq` pure ())
    copied <- timeIt (decodeBytes t ids >>= evaluate . B.copy >>= \c -> B.length c `seq` pure ())
    let row :: String -> Double -> IO ()
        row how ns = printf "%s\t%s\t%d\t%d\t%.0f\n" how a (B.length bytes) (length ids) ns
    row "adopted" adopted
    row "adopted+copy" copied
