//! Reads a conversation document into JSON values, counting messages as it
//! goes: the `messages` array (Responses: `input`; or a bare top-level array) is refused at its
//! [`MAX_MESSAGES`]` + 1`th element, before the rest is read, so an
//! oversized history costs what the limit costs, not what the document
//! holds. Everything else is read as [`crate::json::parse_value`] reads it
//! (object key order kept, numbers kept as written, a repeated key refused).

use std::fmt;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use crate::json::Strict;

use crate::limits::MAX_MESSAGES;
use crate::Result;

/// Parses `text` (size and depth limits included, see [`crate::json::parse`])
/// with the message-count limit applied while reading.
pub(super) fn read(text: &str) -> Result<Value> {
    crate::json::parse::<Doc>("conversation", text).map(|d| d.0)
}

/// The whole document.
struct Doc(Value);

impl<'de> de::Deserialize<'de> for Doc {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(Node::Top).map(Doc)
    }
}

/// Where the value being read sits, which decides whether its array is a
/// list of messages.
#[derive(Clone, Copy)]
enum Node {
    /// The document: an array is a bare list of messages; an object's
    /// `messages` member is the list.
    Top,
    /// The value of the top-level `messages` key.
    Messages,
}

impl<'de> DeserializeSeed<'de> for Node {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> std::result::Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Strict(v)) = seq.next_element::<Strict>()? {
            if items.len() == MAX_MESSAGES {
                return Err(crate::json::limit_error(format!(
                    "has more than {MAX_MESSAGES} messages; the limit is {MAX_MESSAGES} (MAX_MESSAGES)"
                )));
            }
            items.push(v);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<Value, A::Error> {
        crate::json::visit_strict_map(map, |key, map| match self {
            // Chat and Anthropic `messages`, Responses `input`, Gemini `contents`.
            Node::Top if key == "messages" || key == "input" || key == "contents" => {
                map.next_value_seed(Node::Messages)
            }
            _ => map.next_value::<Strict>().map(|s| s.0),
        })
    }

    fn visit_bool<E>(self, v: bool) -> std::result::Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> std::result::Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> std::result::Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, v: &str) -> std::result::Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> std::result::Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> std::result::Result<Value, E> {
        Ok(Value::Null)
    }
}
