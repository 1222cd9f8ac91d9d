//! Strings: `minLength`/`maxLength`, the common `format`s and `pattern`
//! (through the `pattern` module), else the plain default string.

use serde_json::{Map, Value};

use super::choice::splitmix64;
use super::{Ctx, Generator, MAX_STRING_CHARS, get_usize, pattern};

/// The plain string value.
const DEFAULT_STRING: &str = "test";

impl Generator<'_> {
    /// A string within the length bounds: the `format`'s value if it fits,
    /// else one matching `pattern`, else the default string.
    pub(super) fn string(&self, obj: &Map<String, Value>, ctx: Ctx) -> String {
        let min = get_usize(obj, "minLength")
            .unwrap_or(0)
            .min(MAX_STRING_CHARS);
        let max = get_usize(obj, "maxLength")
            .unwrap_or(MAX_STRING_CHARS)
            .clamp(min, MAX_STRING_CHARS);
        if let Some(Value::String(format)) = obj.get("format")
            && let Some(text) = self.format_value(format, ctx.variant)
            && (min..=max).contains(&text.chars().count())
        {
            return text;
        }
        if let Some(Value::String(pattern)) = obj.get("pattern")
            && let Some(text) = pattern::generate(pattern, min, max)
        {
            return text;
        }
        default_string(min, max, ctx.variant)
    }

    /// A fixed sample value for a known `format` (`uuid` from the seed).
    fn format_value(&self, format: &str, variant: u64) -> Option<String> {
        let fixed = match format {
            "date-time" => "2026-01-01T00:00:00Z",
            "date" => "2026-01-01",
            "time" => "00:00:00Z",
            "duration" => "P1D",
            "email" | "idn-email" => "user@example.com",
            "hostname" | "idn-hostname" => "example.com",
            "ipv4" => "127.0.0.1",
            "ipv6" => "::1",
            "uri" | "url" | "iri" | "uri-reference" | "iri-reference" | "uri-template" => {
                "https://example.com/"
            }
            "json-pointer" => "/test",
            "relative-json-pointer" => "0",
            "regex" => "^test$",
            "byte" => "dGVzdA==",
            "uuid" => return Some(uuid(self.seed, variant)),
            _ => return None,
        };
        Some(fixed.to_owned())
    }
}

/// A version-4 UUID derived from the seed (and the uniqueness variant).
fn uuid(seed: u64, variant: u64) -> String {
    let mut state = seed ^ variant.wrapping_mul(0xD1B5_4A32_D192_ED03);
    let high = (splitmix64(&mut state) & !0xF000) | 0x4000;
    let low = (splitmix64(&mut state) & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        high >> 32,
        (high >> 16) & 0xFFFF,
        high & 0xFFFF,
        low >> 48,
        low & 0xFFFF_FFFF_FFFF
    )
}

/// `"test"` cycled or truncated to fit the bounds, varied for unique items.
fn default_string(min: usize, max: usize, variant: u64) -> String {
    let len = DEFAULT_STRING.len().clamp(min, max.max(min));
    let mut chars: Vec<char> = DEFAULT_STRING.chars().cycle().take(len).collect();
    let mut carry = variant;
    for slot in chars.iter_mut().rev() {
        if carry == 0 {
            break;
        }
        let digit = u64::from(*slot).saturating_sub(u64::from('a')) + carry;
        let letter = u8::try_from(digit % 26).unwrap_or(0);
        *slot = char::from(b'a' + letter);
        carry = digit / 26;
    }
    chars.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::tests::{valid, with_prop, x_of};
    use crate::schema_args::{MAX_STRING_CHARS, generate_args};

    #[test]
    fn every_format_validates() {
        for format in [
            "date-time",
            "date",
            "time",
            "duration",
            "email",
            "idn-email",
            "hostname",
            "idn-hostname",
            "ipv4",
            "ipv6",
            "uri",
            "url",
            "iri",
            "uri-reference",
            "iri-reference",
            "uri-template",
            "uuid",
            "json-pointer",
            "relative-json-pointer",
            "regex",
            "byte",
            "password",
            "no-such-format",
        ] {
            x_of(json!({"type": "string", "format": format}));
        }
        assert_eq!(
            x_of(json!({"type": "string", "format": "date-time"})),
            "2026-01-01T00:00:00Z"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "date"})),
            "2026-01-01"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "uri"})),
            "https://example.com/"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "url"})),
            "https://example.com/"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "email"})),
            "user@example.com"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "ipv4"})),
            "127.0.0.1"
        );
        assert_eq!(
            x_of(json!({"type": "string", "format": "hostname"})),
            "example.com"
        );
    }

    #[test]
    fn uuid_depends_on_seed_only() {
        let schema = with_prop(json!({"type": "string", "format": "uuid"}));
        let a = valid(&schema, 1);
        let b = valid(&schema, 2);
        assert_ne!(a, b);
        assert_eq!(a, generate_args(&schema, 1));
        let text = a["x"].as_str().unwrap();
        assert_eq!(text.len(), 36);
        assert_eq!(&text[14..15], "4");
    }

    #[test]
    fn string_lengths() {
        assert_eq!(x_of(json!({"type": "string"})), "test");
        assert_eq!(x_of(json!({"type": "string", "maxLength": 2})), "te");
        assert_eq!(x_of(json!({"type": "string", "maxLength": 0})), "");
        assert_eq!(
            x_of(json!({"type": "string", "minLength": 10})),
            "testtestte"
        );
        x_of(json!({"type": "string", "minLength": 3, "maxLength": 3}));
        let long = x_of(json!({"type": "string", "minLength": 10_000}));
        assert_eq!(long.as_str().unwrap().len(), 10_000);
        let huge = generate_args(
            &with_prop(json!({"type": "string", "minLength": 1_000_000_000_000_u64})),
            0,
        );
        assert_eq!(huge["x"].as_str().unwrap().len(), MAX_STRING_CHARS);
    }
}
