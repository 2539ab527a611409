"""Generates the Kotlin and Swift types of the JSON shapes the uniffi binding
passes as JSON text (options, reports, events) from the committed JSON Schemas
in schemas/ (themselves generated from the core's types by `xtask schemas`),
so neither language restates them by hand:

- Kotlin: kotlin/src/main/kotlin/dev/turnfit/types/SchemaTypes.kt, data classes
  in package `dev.turnfit.types` for Gson (the JSON library the Kotlin tests
  already use, Debian's libgoogle-gson-java), with the Gson adapters of the
  tagged unions and `TurnfitJson.gson` that registers them;
- Swift: swift/Sources/Turnfit/SchemaTypes.swift, `Codable` structs and enums
  nested in the namespace `TurnfitTypes` (the module already has uniffi's
  `Preflight` record, so the schema types cannot be top-level there).

`--check` fails when a committed file differs (the drift check of
bindings/uniffi/test.sh), like bindings/node/scripts/schema-types.mjs and
bindings/python/scripts/schema_types.py, whose root names this one shares.

Mapping: an object with properties is a class/struct (a key outside
`required` is nullable, default null); `oneOf` of string consts and string
`enum`s are enums; a `oneOf` of objects that share one const property (the
`status` / `kind` / `decision` tag) is a sealed class / an enum with
associated values; `anyOf [X, null]` is a nullable X; integers are `Long`
(Kotlin) and `Int64`/`UInt64` (Swift, by sign); a JSON value with no fixed
shape (a message, an untagged union such as an OpenAI-or-Anthropic
conversation) stays a `JsonElement` / `JSONValue`. An unknown keyword makes
it fail, not guess.
"""

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
PKG = HERE.parent
ROOT = PKG.parents[1]
KT_OUT = PKG / "kotlin" / "src" / "main" / "kotlin" / "dev" / "turnfit" / "types" / "SchemaTypes.kt"
SWIFT_OUT = PKG / "swift" / "Sources" / "Turnfit" / "SchemaTypes.swift"

# schema file stem -> the name of its root type. The first block are the
# Node and Python bindings' names; the rest follow the schema titles, renamed
# where a title is not a type name (Array_of_..., Map_of_...) or collides.
ROOTS = {
    "window-budget": "Budget",
    "preflight-report": "Preflight",
    "validation-issues": "Issues",
    "repair-changes": "Changes",
    "compaction-policy": "Policy",
    "compact-result": "CompactOutcome",
    "compact-report": "CompactReport",
    "fit-options": "FitOptions",
    "fit-report": "FitReport",
    "turn-report": "TurnReport",
    "summarizer-call": "SummarizerCall",
    "assemble-request": "AssembleRequest",
    "assemble-result": "AssembleResult",
    "event": "Event",
    "backoff-decision": "RetryDecision",
    "backoff-request": "BackoffRequest",
    "breaker-config": "BreakerConfig",
    "breaker-state": "BreakerSnapshot",
    "callstack": "CallStackJson",
    "classification": "Classification",
    "classify-headers": "ClassifyHeaders",
    "classify-request": "ClassifyRequest",
    "error-context": "ErrorContext",
    "failure-counts": "FailureCounts",
    "conversation": "Conversation",
    "handoff-filter-options": "FilterOptions",
    "handoff-filter-result": "FilterResult",
    "handoff-render-options": "RenderOptions",
    "handoff-render-result": "RenderResult",
    "handoff": "Handoff",
    "model-info": "ModelInfo",
    "model-profile": "ProfileInput",
    "registry-list": "RegistryList",
    "skill-body": "SkillBody",
    "skills-index-options": "IndexOptions",
    "skills-index": "IndexResult",
    "skills-list": "Listing",
    "skills-open-options": "OpenOptions",
    "span-end": "SpanEnd",
    "span-info": "SpanInfo",
    "span-record": "SpanRecordOrNull",
    "special-policy": "SpecialPolicy",
    "special-tokens": "SpecialTokenList",
    "file-tokenizer-info": "FileTokenizerInfo",
    "tokenizer-info": "TokenizerInfo",
    "toolset-report": "ToolsetReport",
    "toolset-request": "ToolsetRequest",
    "trace-export": "TraceExport",
    "tracer-config": "TracerConfig",
    "tracer-overdue": "Overdue",
}

KNOWN = {
    "$schema", "$id", "title", "description", "type", "properties", "required", "$ref", "$defs",
    "anyOf", "oneOf", "allOf", "enum", "const", "items", "additionalProperties", "format", "minimum",
    "maximum", "default", "minItems", "maxItems", "uniqueItems", "examples", "deprecated",
}
META = {"$schema", "$id", "title", "description", "$defs", "default", "examples"}

KOTLIN_KEYWORDS = {
    "as", "break", "class", "continue", "do", "else", "false", "for", "fun", "if", "in", "interface",
    "is", "null", "object", "package", "return", "super", "this", "throw", "true", "try", "typealias",
    "typeof", "val", "var", "when", "while",
}
SWIFT_KEYWORDS = {
    "associatedtype", "class", "deinit", "enum", "extension", "fileprivate", "func", "import", "init",
    "inout", "internal", "let", "open", "operator", "private", "protocol", "public", "rethrows",
    "static", "struct", "subscript", "typealias", "var", "break", "case", "continue", "default",
    "defer", "do", "else", "fallthrough", "for", "guard", "if", "in", "repeat", "return", "switch",
    "where", "while", "as", "catch", "false", "is", "nil", "self", "Self", "super", "throw", "throws",
    "true", "try", "Type", "Any",
}


def fail(msg):
    raise SystemExit(f"schema_types: {msg}")


def pascal(s):
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^A-Za-z0-9]+", s) if w)


def camel(s):
    p = pascal(s)
    return p[:1].lower() + p[1:]


def first_para(s):
    return (s.get("description") or "").split("\n\n")[0].strip() if isinstance(s, dict) else ""


# The model both emitters read. Types: ("str",), ("int", signed), ("double",),
# ("bool",), ("json",), ("list", t), ("map", t), ("opt", t), ("ref", name).
# Declarations: ("struct", doc, fields, extra) with fields [(key, type,
# required, doc)] and extra true when the object also takes keys it does not
# list (`additionalProperties` beside `properties`: kept in an `extra` map),
# ("enum", doc, [(value, doc)]), ("union", doc, tag, [(value, variant name,
# fields)]), ("alias", doc, type).
class Model:
    def __init__(self):
        self.decls = {}
        self.defs = {}
        self.origin = {}

    def declare(self, name, decl, where):
        if name in self.decls:
            if self.decls[name] != decl:
                fail(f"{name} is declared differently by {self.origin[name]} and {where}")
            return
        self.decls[name] = decl
        self.origin[name] = where

    def ref(self, s):
        prefix = "#/$defs/"
        if not s["$ref"].startswith(prefix):
            fail(f"$ref {s['$ref']} is not local")
        return s["$ref"][len(prefix):]

    def ty(self, s, hint, where):
        """The type of schema `s`; `hint` names it if it needs a declaration."""
        if s is True or s == {}:
            return ("json",)
        if not isinstance(s, dict):
            fail(f"{where}: schema {s!r} is not handled")
        for k in s:
            if k not in KNOWN:
                fail(f"{where}: keyword {k} is not handled")
        if "$ref" in s and "properties" not in s:
            name = self.ref(s)
            if name not in self.decls:
                self.declare_def(name, where)
            return ("ref", name)
        if "const" in s:
            return ("str",) if isinstance(s["const"], str) else ("json",)
        if "enum" in s:
            vals = s["enum"]
            strs = [v for v in vals if v is not None]
            if not all(isinstance(v, str) for v in strs):
                return ("json",)
            self.declare(hint, ("enum", first_para(s), [(v, "") for v in strs]), where)
            return ("opt", ("ref", hint)) if None in vals else ("ref", hint)
        alts = s.get("anyOf") or s.get("oneOf")
        if alts:
            return self.alternatives(s, alts, hint, where)
        if "allOf" in s:
            if len(s["allOf"]) == 1:
                return self.ty(s["allOf"][0], hint, where)
            return ("json",)
        t = s.get("type")
        if isinstance(t, list):
            rest = [x for x in t if x != "null"]
            if len(rest) != 1:
                return ("json",)
            inner = self.ty({**s, "type": rest[0]}, hint, where)
            return ("opt", inner) if "null" in t else inner
        if t == "string":
            return ("str",)
        if t == "integer":
            signed = not (s.get("minimum", -1) >= 0 or str(s.get("format", "")).startswith("uint"))
            return ("int", signed)
        if t == "number":
            return ("double",)
        if t == "boolean":
            return ("bool",)
        if t == "null":
            return ("json",)
        if t == "array":
            return ("list", self.ty(s.get("items", True), hint + "Item" if hint else None, where))
        if t == "object" or (t is None and "properties" in s):
            if "properties" in s:
                if not hint:
                    fail(f"{where}: an object with properties needs a name")
                extra = s.get("additionalProperties", False) not in (False, None)
                self.declare(hint, ("struct", first_para(s), self.fields(s, hint, where), extra), where)
                return ("ref", hint)
            extra = s.get("additionalProperties")
            if isinstance(extra, dict) and extra:
                return ("map", self.ty(extra, hint + "Value" if hint else None, where))
            return ("json",)
        if t is None:
            return ("json",)
        fail(f"{where}: type {t} is not handled")

    def alternatives(self, s, alts, hint, where):
        nonnull = [a for a in alts if not (isinstance(a, dict) and a.get("type") == "null")]
        if len(nonnull) == 1 and len(alts) == 2:
            return ("opt", self.ty(nonnull[0], hint, where))
        if all(isinstance(a, dict) and isinstance(a.get("const"), str) and set(a) <= {"const", "type", "description"} for a in alts):
            self.declare(hint, ("enum", first_para(s), [(a["const"], first_para(a)) for a in alts]), where)
            return ("ref", hint)
        tag = self.tag_of(alts)
        if tag and hint:
            variants = []
            for a in alts:
                value = a["properties"][tag]["const"]
                fields = [f for f in self.fields(a, hint + pascal(value), where) if f[0] != tag]
                variants.append((value, pascal(value), first_para(a), fields))
            self.declare(hint, ("union", first_para(s), tag, variants), where)
            return ("ref", hint)
        return ("json",)

    def tag_of(self, alts):
        """The const property every alternative object has, if any."""
        common = None
        for a in alts:
            if not (isinstance(a, dict) and "properties" in a):
                return None
            consts = {k for k, v in a["properties"].items() if isinstance(v, dict) and "const" in v}
            common = consts if common is None else common & consts
        return sorted(common)[0] if common else None

    def fields(self, s, name, where):
        """(key, type, required, doc) of an object, a `$ref` beside the properties merged in."""
        out = []
        if "$ref" in s:
            base = self.defs.get(self.ref(s))
            if base is None:
                fail(f"{where}: $ref {s['$ref']} is not defined")
            out = self.fields(base, name, where)
        required = set(s.get("required", []))
        for key, p in s.get("properties", {}).items():
            t = self.ty(p, name + pascal(key), where)
            out = [f for f in out if f[0] != key]
            out.append((key, t, key in required, first_para(p)))
        return out

    def declare_def(self, name, where):
        d = self.defs[name]
        t = self.ty(d, name, where)
        if t != ("ref", name):
            self.declare(name, ("alias", first_para(d), t), where)


def build():
    m = Model()
    for stem, root in ROOTS.items():
        path = ROOT / "schemas" / f"{stem}.json"
        schema = json.loads(path.read_text(encoding="utf-8"))
        defs = schema.get("$defs", {})
        for name, d in defs.items():
            if name in m.defs and m.defs[name] != d:
                fail(f"two schemas define {name} differently (schemas/{stem}.json)")
            m.defs[name] = d
        where = f"schemas/{stem}.json"
        for name in defs:
            if name not in m.decls and name != root:
                m.declare_def(name, where)
        top = {k: v for k, v in schema.items() if k not in META or k == "description"}
        t = m.ty(top, root, where)
        if t != ("ref", root):
            m.declare(root, ("alias", first_para(schema), t), where)
    missing = {p.stem for p in (ROOT / "schemas").glob("*.json")} - set(ROOTS)
    if missing:
        fail(f"schemas without a root name in ROOTS: {sorted(missing)}")
    return m


# ---------------------------------------------------------------- Kotlin

KT_RUNTIME = """/**
 * Reads and writes a sealed class tagged by one property (`status`, `kind`,
 * `decision`): the variant's own fields come from Gson's reflective adapter
 * for the variant class, the tag is written first. Registered for the base
 * class and every variant, so a variant serialized on its own keeps its tag.
 */
internal class TaggedUnionFactory<T : Any>(
    private val base: Class<T>,
    private val tag: String,
    private val variants: Map<String, Class<out T>>,
) : TypeAdapterFactory {
    override fun <R> create(gson: Gson, type: TypeToken<R>): TypeAdapter<R>? {
        if (!base.isAssignableFrom(type.rawType)) return null
        val delegates = variants.mapValues { (_, c) -> gson.getDelegateAdapter(this, TypeToken.get(c)) }
        val names = variants.entries.associate { (k, v) -> v to k }
        val elements = gson.getAdapter(JsonElement::class.java)
        val adapter = object : TypeAdapter<T>() {
            override fun write(out: JsonWriter, value: T?) {
                if (value == null) {
                    out.nullValue()
                    return
                }
                val name = names[value.javaClass] ?: throw JsonParseException("${base.simpleName}: ${value.javaClass} is not a variant")
                @Suppress("UNCHECKED_CAST")
                val body = (delegates.getValue(name) as TypeAdapter<T>).toJsonTree(value).asJsonObject
                val o = JsonObject()
                o.addProperty(tag, name)
                for ((k, v) in body.entrySet()) o.add(k, v)
                elements.write(out, o)
            }

            override fun read(reader: JsonReader): T? {
                val e = elements.read(reader)
                if (e.isJsonNull) return null
                if (!e.isJsonObject) throw JsonParseException("${base.simpleName}: not an object")
                val t = e.asJsonObject.get(tag)?.takeIf { it.isJsonPrimitive }?.asString
                val d = delegates[t] ?: throw JsonParseException("${base.simpleName}: unknown $tag $t")
                return d.fromJsonTree(e)
            }
        }
        @Suppress("UNCHECKED_CAST")
        return adapter as TypeAdapter<R>
    }
}

/**
 * Keeps the keys an open object does not list (`additionalProperties` beside
 * `properties`) in its `extra` map, and writes them back after the others.
 */
internal class ExtraKeysFactory(private val cls: Class<*>, private val known: Set<String>) : TypeAdapterFactory {
    override fun <R> create(gson: Gson, type: TypeToken<R>): TypeAdapter<R>? {
        if (type.rawType != cls) return null
        val delegate = gson.getDelegateAdapter(this, type)
        val elements = gson.getAdapter(JsonElement::class.java)
        val field = cls.getDeclaredField("extra").apply { isAccessible = true }
        return object : TypeAdapter<R>() {
            override fun write(out: JsonWriter, value: R?) {
                if (value == null) {
                    out.nullValue()
                    return
                }
                val o = delegate.toJsonTree(value).asJsonObject
                @Suppress("UNCHECKED_CAST")
                (field.get(value) as Map<String, JsonElement>?)?.forEach { (k, v) -> if (k !in known) o.add(k, v) }
                elements.write(out, o)
            }

            override fun read(reader: JsonReader): R? {
                val e = elements.read(reader)
                if (e.isJsonNull) return null
                val value = delegate.fromJsonTree(e) ?: return null
                val extra = LinkedHashMap<String, JsonElement>()
                for ((k, v) in e.asJsonObject.entrySet()) if (k !in known) extra[k] = v
                field.set(value, extra)
                return value
            }
        }
    }
}

/**
 * Integers as `Long`, refusing what does not fit instead of wrapping: Gson
 * reads 18446744073709551615 from a string as an error but from a
 * JsonElement as -1. A `u64` field above 2^63-1 (a `seed`, say) cannot be
 * held by these types; that is a JsonSyntaxException, never a wrong number.
 */
internal object ExactLongAdapter : TypeAdapter<Long>() {
    override fun write(out: JsonWriter, value: Long?) {
        if (value == null) out.nullValue() else out.value(value)
    }

    override fun read(reader: JsonReader): Long? {
        if (reader.peek() == com.google.gson.stream.JsonToken.NULL) {
            reader.nextNull()
            return null
        }
        val text = reader.nextString()
        return text.toLongOrNull()
            ?: try {
                java.math.BigDecimal(text).longValueExact()
            } catch (e: ArithmeticException) {
                throw com.google.gson.JsonSyntaxException("$text is not an integer that fits a Long (a u64 above 2^63-1?)", e)
            } catch (e: NumberFormatException) {
                throw com.google.gson.JsonSyntaxException("$text is not a number", e)
            }
    }
}

/**
 * The Gson instance that reads and writes these types: the tagged unions'
 * and open objects' adapters registered, integers checked (ExactLongAdapter),
 * HTML escaping off (the JSON is data, not markup). Null members are
 * omitted on output.
 */
object TurnfitJson {
    @JvmStatic
    val gson: Gson = GsonBuilder()
        .registerTypeAdapter(Long::class.java, ExactLongAdapter)
        .registerTypeAdapter(Long::class.javaObjectType, ExactLongAdapter)
REGISTRATIONS
        .disableHtmlEscaping()
        .create()

    /** Decodes [json] as [T] (`TurnfitJson.decode<FitReport>(text)`). */
    inline fun <reified T> decode(json: String): T =
        gson.fromJson(json, object : TypeToken<T>() {}.type)

    /** Encodes [value] as compact JSON text. */
    fun encode(value: Any): String = gson.toJson(value)
}
"""


def kt_ident(key):
    n = camel(key)
    return f"`{n}`" if n in KOTLIN_KEYWORDS else n


def kt_type(t):
    k = t[0]
    if k == "str":
        return "String"
    if k == "int":
        return "Long"
    if k == "double":
        return "Double"
    if k == "bool":
        return "Boolean"
    if k == "json":
        return "JsonElement"
    if k == "list":
        return f"List<{kt_type(t[1])}>"
    if k == "map":
        return f"Map<String, {kt_type(t[1])}>"
    if k == "opt":
        return kt_type(t[1]).rstrip("?") + "?"
    return t[1]


def kt_doc(doc, indent):
    if not doc:
        return ""
    lines = doc.replace("*/", "*&#47;").split("\n")
    if len(lines) == 1:
        return f"{indent}/** {lines[0]} */\n"
    return f"{indent}/**\n" + "".join(f"{indent} *{' ' + l if l else ''}\n" for l in lines) + f"{indent} */\n"


def kt_params(fields, indent):
    out = []
    for key, t, required, doc in fields:
        ty = kt_type(t)
        nullable = ty.endswith("?") or not required
        decl = f'@SerializedName("{key}") val {kt_ident(key)}: {ty.rstrip("?")}{"?" if nullable else ""}'
        if nullable:
            decl += " = null"
        out.append(kt_doc(doc, indent) + f"{indent}{decl},\n")
    return "".join(out)


EXTRA_DOC = "Keys not listed above (the schema allows any), kept as given."


def kt_class(name, doc, fields, indent, parent="", extra=False):
    head = kt_doc(doc, indent)
    if extra:
        head += f"{indent}// `extra` is filled and written by ExtraKeysFactory (TurnfitJson.gson).\n"
    sup = f" : {parent}()" if parent else ""
    if not fields:
        return (f"{head}{indent}class {name}{sup} {{\n{indent}    override fun equals(other: Any?) = other is {name}\n"
                f"{indent}    override fun hashCode() = {json.dumps(name)}.hashCode()\n{indent}}}\n")
    params = kt_params(fields, indent + "    ")
    if extra:
        params += kt_doc(EXTRA_DOC, indent + "    ") + f"{indent}    @Transient val extra: Map<String, JsonElement> = emptyMap(),\n"
    return f"{head}{indent}data class {name}(\n{params}{indent}){sup}\n"


def kt_const(value):
    n = re.sub(r"[^A-Za-z0-9]+", "_", value).strip("_").upper() or "EMPTY"
    return f"_{n}" if n[0].isdigit() else n


def kotlin(m):
    out = [
        "// Generated by bindings/uniffi/scripts/schema_types.py from schemas/*.json",
        "// (which xtask generates from the core's types). Do not edit; run",
        "// `python3 bindings/uniffi/scripts/schema_types.py` and commit the result.",
        "@file:Suppress(\"unused\", \"RedundantVisibilityModifier\")",
        "",
        "package dev.turnfit.types",
        "",
        "import com.google.gson.Gson",
        "import com.google.gson.GsonBuilder",
        "import com.google.gson.JsonElement",
        "import com.google.gson.JsonObject",
        "import com.google.gson.JsonParseException",
        "import com.google.gson.TypeAdapter",
        "import com.google.gson.TypeAdapterFactory",
        "import com.google.gson.annotations.SerializedName",
        "import com.google.gson.reflect.TypeToken",
        "import com.google.gson.stream.JsonReader",
        "import com.google.gson.stream.JsonWriter",
        "",
    ]
    unions = []
    extras = []
    for name in sorted(m.decls):
        d = m.decls[name]
        kind = d[0]
        if kind == "struct":
            out.append(kt_class(name, d[1], d[2], "", extra=d[3]))
            if d[3]:
                extras.append((name, [f[0] for f in d[2]]))
        elif kind == "alias":
            out.append(kt_doc(d[1], "") + f"typealias {name} = {kt_type(d[2])}\n")
        elif kind == "enum":
            consts = "".join(kt_doc(doc, "    ") + f'    @SerializedName({json.dumps(v)}) {kt_const(v)},\n' for v, doc in d[2])
            out.append(kt_doc(d[1], "") + f"enum class {name} {{\n{consts}}}\n")
        elif kind == "union":
            _, doc, tag, variants = d
            body = "".join(kt_class(vn, vdoc, fields, "    ", name) for _, vn, vdoc, fields in variants)
            doc = (doc + "\n\n" if doc else "") + f"Tagged by `{tag}`; read and written by [TurnfitJson.gson] (TaggedUnionFactory)."
            out.append(kt_doc(doc, "") + f"sealed class {name} {{\n{body}}}\n")
            unions.append((name, tag, variants))
    regs = []
    for name, tag, variants in unions:
        vs = ", ".join(f"{json.dumps(v)} to {name}.{vn}::class.java" for v, vn, _, _ in variants)
        regs.append(f"        .registerTypeAdapterFactory(TaggedUnionFactory({name}::class.java, {json.dumps(tag)}, mapOf({vs})))\n")
    for name, keys in extras:
        ks = ", ".join(json.dumps(k) for k in keys)
        regs.append(f"        .registerTypeAdapterFactory(ExtraKeysFactory({name}::class.java, setOf({ks})))\n")
    out.append(KT_RUNTIME.replace("REGISTRATIONS\n", "".join(regs)))
    return "\n".join(out)


# ---------------------------------------------------------------- Swift

def sw_ident(key):
    n = camel(key)
    return f"`{n}`" if n in SWIFT_KEYWORDS else n


def sw_type(t):
    k = t[0]
    if k == "str":
        return "String"
    if k == "int":
        return "Int64" if t[1] else "UInt64"
    if k == "double":
        return "Double"
    if k == "bool":
        return "Bool"
    if k == "json":
        return "JSONValue"
    if k == "list":
        return f"[{sw_type(t[1])}]"
    if k == "map":
        return f"[String: {sw_type(t[1])}]"
    if k == "opt":
        return sw_type(t[1]).rstrip("?") + "?"
    return t[1]


def sw_doc(doc, indent):
    return "".join(f"{indent}///{' ' + l if l else ''}\n" for l in doc.split("\n")) if doc else ""


def sw_struct(name, doc, fields, indent, extra=False):
    i2 = indent + "    "
    props, params, assigns, keys, dec, enc = [], [], [], [], [], []
    for key, t, required, fdoc in fields:
        ty = sw_type(t)
        nullable = ty.endswith("?") or not required
        ty = ty.rstrip("?") + ("?" if nullable else "")
        ident = sw_ident(key)
        bare = ty.rstrip("?")
        if nullable:
            dec.append(f"{i2}    self.{ident} = try c.decodeIfPresent({bare}.self, forKey: .{ident})\n")
            enc.append(f"{i2}    try c.encodeIfPresent({ident}, forKey: .{ident})\n")
        else:
            dec.append(f"{i2}    self.{ident} = try c.decode({bare}.self, forKey: .{ident})\n")
            enc.append(f"{i2}    try c.encode({ident}, forKey: .{ident})\n")
        props.append(sw_doc(fdoc, i2) + f"{i2}public var {ident}: {ty}\n")
        params.append(f"{ident}: {ty}{' = nil' if nullable else ''}")
        assigns.append(f"{i2}    self.{ident.strip('`')} = {ident.strip('`')}\n" if not ident.startswith("`") else f"{i2}    self.{ident} = {ident}\n")
        keys.append(f"{i2}    case {ident}" + (f' = {json.dumps(key)}' if camel(key) != key else "") + "\n")
    if extra:
        props.append(sw_doc(EXTRA_DOC, i2) + f"{i2}public var extra: [String: JSONValue]\n")
        params.append("extra: [String: JSONValue] = [:]")
        assigns.append(f"{i2}    self.extra = extra\n")
    body = "".join(props)
    body += f"\n{i2}public init({', '.join(params)}) {{\n{''.join(assigns)}{i2}}}\n"
    if keys:
        body += f"\n{i2}enum CodingKeys: String, CodingKey {{\n{''.join(keys)}{i2}}}\n"
    if extra:
        known = ", ".join(json.dumps(f[0]) for f in fields)
        body += (
            f"\n{i2}private static let known: Set<String> = [{known}]\n"
            f"\n{i2}public init(from decoder: Decoder) throws {{\n"
            f"{i2}    let c = try decoder.container(keyedBy: CodingKeys.self)\n{''.join(dec)}"
            f"{i2}    let all = try decoder.container(keyedBy: AnyKey.self)\n"
            f"{i2}    var extra: [String: JSONValue] = [:]\n"
            f"{i2}    for k in all.allKeys where !Self.known.contains(k.stringValue) {{\n"
            f"{i2}        extra[k.stringValue] = try all.decode(JSONValue.self, forKey: k)\n"
            f"{i2}    }}\n{i2}    self.extra = extra\n{i2}}}\n"
            f"\n{i2}public func encode(to encoder: Encoder) throws {{\n"
            f"{i2}    var c = encoder.container(keyedBy: CodingKeys.self)\n{''.join(enc)}"
            f"{i2}    var all = encoder.container(keyedBy: AnyKey.self)\n"
            f"{i2}    for (k, v) in extra where !Self.known.contains(k) {{\n"
            f"{i2}        try all.encode(v, forKey: AnyKey(k))\n"
            f"{i2}    }}\n{i2}}}\n"
        )
    return sw_doc(doc, indent) + f"{indent}public struct {name}: Codable, Equatable, Sendable {{\n{body}{indent}}}\n"


def swift(m):
    out = [
        "// Generated by bindings/uniffi/scripts/schema_types.py from schemas/*.json",
        "// (which xtask generates from the core's types). Do not edit; run",
        "// `python3 bindings/uniffi/scripts/schema_types.py` and commit the result.",
        "",
        "import Foundation",
        "",
        "/// The JSON shapes turnfit reads and writes as text (options, reports,",
        "/// events), as `Codable` types: decode a report with",
        "/// `JSONDecoder().decode(TurnfitTypes.FitReport.self, from: data)`.",
        "/// A namespace, because uniffi's records (`Preflight`, ...) are top-level.",
        "public enum TurnfitTypes {}",
        "",
        "extension TurnfitTypes {",
        """    /// A JSON value with no fixed shape (a message, an untagged union).
    /// Numbers are `Double`: integers above 2^53 lose precision here.
    public enum JSONValue: Codable, Equatable, Sendable {
        case null
        case bool(Bool)
        case number(Double)
        case string(String)
        case array([JSONValue])
        case object([String: JSONValue])

        public init(from decoder: Decoder) throws {
            let c = try decoder.singleValueContainer()
            if c.decodeNil() {
                self = .null
            } else if let b = try? c.decode(Bool.self) {
                self = .bool(b)
            } else if let n = try? c.decode(Double.self) {
                self = .number(n)
            } else if let s = try? c.decode(String.self) {
                self = .string(s)
            } else if let a = try? c.decode([JSONValue].self) {
                self = .array(a)
            } else {
                self = .object(try c.decode([String: JSONValue].self))
            }
        }

        public func encode(to encoder: Encoder) throws {
            var c = encoder.singleValueContainer()
            switch self {
            case .null: try c.encodeNil()
            case .bool(let b): try c.encode(b)
            case .number(let n): try c.encode(n)
            case .string(let s): try c.encode(s)
            case .array(let a): try c.encode(a)
            case .object(let o): try c.encode(o)
            }
        }
    }

    /// Any key of an object: for the keys an open object does not list.
    public struct AnyKey: CodingKey {
        public var stringValue: String
        public var intValue: Int? { nil }
        public init(_ key: String) { stringValue = key }
        public init?(stringValue: String) { self.stringValue = stringValue }
        public init?(intValue: Int) { nil }
    }
""",
    ]
    for name in sorted(m.decls):
        d = m.decls[name]
        kind = d[0]
        if kind == "struct":
            out.append(sw_struct(name, d[1], d[2], "    ", extra=d[3]))
        elif kind == "alias":
            out.append(sw_doc(d[1], "    ") + f"    public typealias {name} = {sw_type(d[2])}\n")
        elif kind == "enum":
            cases = "".join(sw_doc(doc, "        ") + f"        case {sw_ident(v)}" + (f" = {json.dumps(v)}" if camel(v) != v else "") + "\n" for v, doc in d[2])
            out.append(sw_doc(d[1], "    ") + f"    public enum {name}: String, Codable, Equatable, Sendable, CaseIterable {{\n{cases}    }}\n")
        elif kind == "union":
            _, doc, tag, variants = d
            cases = "".join(f"        case {sw_ident(v)}({vn})\n" for v, vn, _, _ in variants)
            structs = "\n".join(sw_struct(vn, vdoc, fields, "        ") for _, vn, vdoc, fields in variants)
            dec = "".join(f"            case {json.dumps(v)}: self = .{sw_ident(v)}(try {vn}(from: decoder))\n" for v, vn, _, _ in variants)
            enc = "".join(f"            case .{sw_ident(v)}(let v):\n                try c.encode({json.dumps(v)}, forKey: .tag)\n                try v.encode(to: encoder)\n" for v, vn, _, _ in variants)
            doc = (doc + "\n\n" if doc else "") + f"Tagged by `{tag}`."
            out.append(sw_doc(doc, "    ") + f"""    public enum {name}: Codable, Equatable, Sendable {{
{cases}
{structs}
        private enum TagKey: String, CodingKey {{
            case tag = {json.dumps(tag)}
        }}

        public init(from decoder: Decoder) throws {{
            let c = try decoder.container(keyedBy: TagKey.self)
            let tag = try c.decode(String.self, forKey: .tag)
            switch tag {{
{dec}            default:
                throw DecodingError.dataCorruptedError(forKey: .tag, in: c, debugDescription: "{name}: unknown {tag} \\(tag)")
            }}
        }}

        public func encode(to encoder: Encoder) throws {{
            var c = encoder.container(keyedBy: TagKey.self)
            switch self {{
{enc}            }}
        }}
    }}
""")
    out.append("}\n")
    return "\n".join(out)


def main():
    m = build()
    files = [(KT_OUT, kotlin(m)), (SWIFT_OUT, swift(m))]
    if "--check" in sys.argv[1:]:
        bad = [p for p, text in files if not p.exists() or p.read_text(encoding="utf-8") != text]
        for p in bad:
            print(f"DRIFT: {p.relative_to(ROOT)} is out of date with schemas/; run `python3 bindings/uniffi/scripts/schema_types.py` and commit it", file=sys.stderr)
        if bad:
            sys.exit(1)
        print(f"schema types: {len(m.decls)} Kotlin and Swift types match schemas/")
    else:
        for p, text in files:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text, encoding="utf-8")
            print(f"wrote {p.relative_to(ROOT)} ({len(m.decls)} types)")


if __name__ == "__main__":
    main()
