{-# LANGUAGE OverloadedStrings #-}

-- | Order-preserving spans of JSON text, for the vector runner.
--
-- Some vector inputs depend on object key order (context sections render in
-- the order given, custom fields are dropped last first, Anthropic tool
-- definitions are counted from their JSON text, summary ids hash messages as
-- written). aeson's 'Data.Aeson.Value' sorts object keys, so the runner hands
-- the library the input's text exactly as the vector file holds it, sliced
-- out by this scanner. It only finds where each value starts and ends; the
-- runner checks every slice against aeson's reading of the same file, so a
-- scanner bug fails the suite instead of changing an input.
module RawJson (Raw (..), Node (..), parseRaw, rawPath, rawPathMaybe) where

import qualified Data.Aeson as A
import qualified Data.ByteString as B
import qualified Data.ByteString.Unsafe as BU
import Data.Text (Text)
import qualified Data.Text as T
import Data.Word (Word8)

-- | A JSON value: its text as written, and its children for containers.
data Raw = Raw {rawText :: !B.ByteString, rawNode :: Node}

data Node = RObject [(Text, Raw)] | RArray [Raw] | RScalar

-- | Scans one JSON document (surrounding whitespace allowed).
parseRaw :: B.ByteString -> Either String Raw
parseRaw bs = do
  (r, e) <- value (ws 0)
  if ws e == len then Right r else Left ("text after the JSON value at byte " ++ show e)
  where
    len = B.length bs
    at :: Int -> Word8
    at i = if i < len then BU.unsafeIndex bs i else 0
    ws i = if i < len && at i `elem` [0x20, 0x09, 0x0a, 0x0d] then ws (i + 1) else i
    slice a b = B.take (b - a) (B.drop a bs)
    bad i what = Left (what ++ " at byte " ++ show i)

    value i = case at i of
      0x7b -> members (ws (i + 1)) i []
      0x5b -> elements (ws (i + 1)) i []
      0x22 -> (\e -> (Raw (slice i e) RScalar, e)) <$> stringEnd (i + 1)
      _ ->
        let e = scalarEnd i
         in if e == i then bad i "expected a JSON value" else Right (Raw (slice i e) RScalar, e)

    -- The byte after the closing quote; i is just past the opening one.
    stringEnd i
      | i >= len = bad i "unterminated string"
      | at i == 0x5c = stringEnd (i + 2)
      | at i == 0x22 = Right (i + 1)
      | otherwise = stringEnd (i + 1)

    -- Numbers and literals run to the next delimiter (aeson's reading of the
    -- same file vouches for their spelling).
    scalarEnd i
      | i < len && at i `notElem` [0x2c, 0x7d, 0x5d, 0x3a, 0x20, 0x09, 0x0a, 0x0d] = scalarEnd (i + 1)
      | otherwise = i

    members i start acc
      | null acc && at i == 0x7d = Right (Raw (slice start (i + 1)) (RObject []), i + 1)
      | at i /= 0x22 = bad i "expected an object key"
      | otherwise = do
          ke <- stringEnd (i + 1)
          key <- either (\e -> bad i ("bad key: " ++ e)) Right (A.eitherDecodeStrict' (slice i ke))
          let c = ws ke
          if at c /= 0x3a then bad c "expected ':'" else Right ()
          (v, e) <- value (ws (c + 1))
          let n = ws e
              acc' = (key, v) : acc
          case at n of
            0x2c -> members (ws (n + 1)) start acc'
            0x7d -> Right (Raw (slice start (n + 1)) (RObject (reverse acc')), n + 1)
            _ -> bad n "expected ',' or '}'"

    elements i start acc
      | null acc && at i == 0x5d = Right (Raw (slice start (i + 1)) (RArray []), i + 1)
      | otherwise = do
          (v, e) <- value i
          let n = ws e
              acc' = v : acc
          case at n of
            0x2c -> elements (ws (n + 1)) start acc'
            0x5d -> Right (Raw (slice start (n + 1)) (RArray (reverse acc')), n + 1)
            _ -> bad n "expected ',' or ']'"

-- | The text of the value at a path of object keys, if there is one
-- (an explicit @null@ counts as absent, like the runner's 'maybeV').
rawPathMaybe :: Raw -> [Text] -> Maybe B.ByteString
rawPathMaybe r [] = if rawText r == "null" then Nothing else Just (rawText r)
rawPathMaybe (Raw _ (RObject kvs)) (k : ks) = lookup k kvs >>= \r -> rawPathMaybe r ks
rawPathMaybe _ _ = Nothing

-- | 'rawPathMaybe' for a value the vector must have.
rawPath :: Raw -> [Text] -> B.ByteString
rawPath r ks = maybe (error ("vector has no " ++ T.unpack (T.intercalate "." ks))) id (rawPathMaybe r ks)
