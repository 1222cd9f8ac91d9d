//! Numbers and integers: `minimum`/`maximum`, their exclusive forms (draft-4
//! booleans included) and `multipleOf`, with `1` as the unconstrained value.

use serde_json::{Map, Number, Value};

/// A number or integer satisfying the schema's numeric keywords (best effort).
pub(super) fn number(obj: &Map<String, Value>, integer: bool, variant: u64) -> Value {
    let bounds = NumberBounds::of(obj);
    let picked = pick_integer(&bounds, variant);
    if let Some(v) = picked
        && (integer || bounds.admits(v as f64))
    {
        return integer_value(v);
    }
    if !integer && let Some(v) = pick_float(&bounds) {
        return number_value(v);
    }
    match picked {
        Some(v) => integer_value(v),
        None => {
            let (lo, hi) = bounds.float_range();
            let fallback = lo.or(hi).unwrap_or(1.0);
            number_value(if integer { fallback.ceil() } else { fallback })
        }
    }
}

/// Numeric constraints of a schema.
struct NumberBounds {
    /// Each bound as `(value, exclusive, is_lower)`.
    limits: Vec<(f64, bool, bool)>,
    /// Integer lower/upper bounds (exact where the schema gave integers).
    lo: Option<i128>,
    hi: Option<i128>,
    /// `multipleOf`, when positive and finite.
    multiple: Option<f64>,
    /// Integer step implied by `multipleOf` (`None` without `multipleOf`,
    /// `0` when no small integer is a multiple).
    step: Option<i128>,
}

impl NumberBounds {
    fn of(obj: &Map<String, Value>) -> Self {
        let draft4_exclusive = |key: &str| matches!(obj.get(key), Some(Value::Bool(true)));
        let specs = [
            ("minimum", draft4_exclusive("exclusiveMinimum"), true),
            ("exclusiveMinimum", true, true),
            ("maximum", draft4_exclusive("exclusiveMaximum"), false),
            ("exclusiveMaximum", true, false),
        ];
        let mut limits = Vec::new();
        let (mut lo, mut hi): (Option<i128>, Option<i128>) = (None, None);
        for (key, exclusive, lower) in specs {
            let Some(Value::Number(n)) = obj.get(key) else {
                continue;
            };
            let Some(f) = n.as_f64().filter(|f| f.is_finite()) else {
                continue;
            };
            limits.push((f, exclusive, lower));
            let bound = int_bound(n, f, exclusive, lower);
            if lower {
                lo = Some(lo.map_or(bound, |l| l.max(bound)));
            } else {
                hi = Some(hi.map_or(bound, |h| h.min(bound)));
            }
        }
        let raw_multiple = obj.get("multipleOf");
        let multiple = raw_multiple
            .and_then(Value::as_f64)
            .filter(|m| m.is_finite() && *m > 0.0);
        NumberBounds {
            limits,
            lo,
            hi,
            multiple,
            step: multiple.map(|m| integer_step(raw_multiple, m).unwrap_or(0)),
        }
    }

    /// Whether `v` satisfies every bound and `multipleOf` (decimal semantics).
    fn admits(&self, v: f64) -> bool {
        if !v.is_finite() {
            return false;
        }
        let in_range =
            self.limits
                .iter()
                .all(|&(limit, exclusive, lower)| match (lower, exclusive) {
                    (true, true) => v > limit,
                    (true, false) => v >= limit,
                    (false, true) => v < limit,
                    (false, false) => v <= limit,
                });
        in_range && self.multiple.is_none_or(|m| is_multiple(v, m))
    }

    /// The tightest float lower and upper limits.
    fn float_range(&self) -> (Option<f64>, Option<f64>) {
        let tightest = |lower: bool, pick: fn(f64, f64) -> f64| {
            self.limits
                .iter()
                .filter(|l| l.2 == lower)
                .map(|l| l.0)
                .reduce(pick)
        };
        (tightest(true, f64::max), tightest(false, f64::min))
    }
}

/// The integer nearest a bound that satisfies it: the smallest one above a
/// lower bound, the largest one below an upper bound (exact for integer bounds).
fn int_bound(n: &Number, f: f64, exclusive: bool, lower: bool) -> i128 {
    let exact = n
        .as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from));
    let extra = i128::from(exclusive);
    match (exact, lower, exclusive) {
        (Some(i), true, _) => i + extra,
        (Some(i), false, _) => i - extra,
        (None, true, true) => (f.floor() as i128).saturating_add(1),
        (None, true, false) => f.ceil() as i128,
        (None, false, true) => (f.ceil() as i128).saturating_sub(1),
        (None, false, false) => f.floor() as i128,
    }
}

/// Smallest positive integer that is a multiple of `m`, if a small one exists.
fn integer_step(raw: Option<&Value>, m: f64) -> Option<i128> {
    if let Some(u) = raw.and_then(Value::as_u64) {
        return (u > 0).then_some(i128::from(u));
    }
    if m.fract() == 0.0 {
        return Some(m as i128);
    }
    (1..=1000_i128).find(|k| is_multiple(*k as f64, m))
}

/// Shortest decimal form of `x` as `(mantissa, decimal places)`.
fn decimal_parts(x: f64) -> Option<(i128, u32)> {
    if !x.is_finite() {
        return None;
    }
    let text = format!("{}", x.abs());
    let (int_part, frac_part) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let digits = format!("{int_part}{frac_part}");
    if digits.len() > 36 {
        return None;
    }
    let mantissa: i128 = digits.parse().ok()?;
    let places = u32::try_from(frac_part.len()).ok()?;
    Some((if x < 0.0 { -mantissa } else { mantissa }, places))
}

/// Whether `v / m` is an integer, reading both as their shortest decimals
/// (the semantics of the `jsonschema` validator), with an exact binary fallback.
fn is_multiple(v: f64, m: f64) -> bool {
    if v == 0.0 {
        return true;
    }
    if !(m.is_finite() && m > 0.0) || v.abs() < m {
        return false;
    }
    if let (Some((vm, vd)), Some((mm, md))) = (decimal_parts(v), decimal_parts(m))
        && mm != 0
    {
        let shared = vd.min(md);
        let scaled_v = 10_i128
            .checked_pow(md - shared)
            .and_then(|p| vm.checked_mul(p));
        let scaled_m = 10_i128
            .checked_pow(vd - shared)
            .and_then(|p| mm.checked_mul(p));
        if let (Some(a), Some(b)) = (scaled_v, scaled_m)
            && b != 0
        {
            return a % b == 0;
        }
    }
    let q = (v / m).round();
    q.is_finite() && q.mul_add(m, -v) == 0.0
}

/// A JSON number for `v`, as an integer when it is one.
fn number_value(v: f64) -> Value {
    if v.fract() == 0.0 && v.abs() < 9.0e18 {
        return Value::from(v as i64);
    }
    Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A JSON integer for `v`.
fn integer_value(v: i128) -> Value {
    if let Ok(i) = i64::try_from(v) {
        Value::from(i)
    } else if let Ok(u) = u64::try_from(v) {
        Value::from(u)
    } else {
        number_value(v as f64)
    }
}

/// The integer closest to `1` within the bounds, aligned to the step, shifted
/// by `variant` steps when possible.
fn pick_integer(bounds: &NumberBounds, variant: u64) -> Option<i128> {
    let in_range = |v: i128| bounds.lo.is_none_or(|l| v >= l) && bounds.hi.is_none_or(|h| v <= h);
    let step = match bounds.step {
        Some(0) => return in_range(0).then_some(0),
        Some(step) => step,
        None => 1,
    };
    let mut target = bounds.lo.map_or(1, |lo| lo.max(1));
    if let Some(hi) = bounds.hi {
        target = target.min(hi);
    }
    let mut value = ceil_div(target, step)?.checked_mul(step)?;
    if let Some(hi) = bounds.hi
        && value > hi
    {
        value = hi.div_euclid(step).checked_mul(step)?;
    }
    if variant > 0 {
        let delta = i128::from(variant).checked_mul(step)?;
        if let Some(up) = value.checked_add(delta).filter(|v| in_range(*v)) {
            return Some(up);
        }
        if let Some(down) = value.checked_sub(delta).filter(|v| in_range(*v)) {
            return Some(down);
        }
    }
    Some(value)
}

/// `a / b` rounded up, for a positive `b`.
fn ceil_div(a: i128, b: i128) -> Option<i128> {
    if b <= 0 {
        return None;
    }
    let q = a.div_euclid(b);
    if a.rem_euclid(b) == 0 {
        Some(q)
    } else {
        q.checked_add(1)
    }
}

/// A non-integer candidate for `number` schemas whose range holds no suitable integer.
fn pick_float(bounds: &NumberBounds) -> Option<f64> {
    let (lo, hi) = bounds.float_range();
    let mut candidates: Vec<f64> = Vec::new();
    if let (Some(lo), Some(hi)) = (lo, hi) {
        candidates.push(lo + (hi - lo) / 2.0);
    }
    if let Some(lo) = lo {
        candidates.extend([lo, lo.next_up(), lo + 1.0]);
    }
    if let Some(hi) = hi {
        candidates.extend([hi, hi.next_down(), hi - 1.0]);
    }
    if let Some(m) = bounds.multiple {
        let places = decimal_parts(m).map_or(0, |(_, d)| d);
        let anchors: Vec<f64> = [Some(1.0), lo, hi, candidates.first().copied()]
            .into_iter()
            .flatten()
            .collect();
        for anchor in anchors {
            let k = (anchor / m).floor();
            for offset in [-1.0, 0.0, 1.0, 2.0] {
                let raw = (k + offset) * m;
                candidates.push(round_to(raw, places));
                candidates.push(raw);
            }
        }
        let mut power = m;
        for _ in 0..64 {
            candidates.extend([power, -power]);
            power *= 2.0;
        }
    }
    candidates.into_iter().find(|c| bounds.admits(*c))
}

/// `x` rounded to `places` decimals (through its decimal text, so the shortest form is clean).
fn round_to(x: f64, places: u32) -> f64 {
    let places = usize::try_from(places.min(300)).unwrap_or(0);
    format!("{x:.places$}").parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::schema_args::tests::{valid_for_seeds, x_of};

    #[test]
    fn integer_bounds() {
        assert_eq!(x_of(json!({"type": "integer"})), 1);
        assert_eq!(x_of(json!({"type": "integer", "minimum": 5})), 5);
        assert_eq!(x_of(json!({"type": "integer", "maximum": -3})), -3);
        assert_eq!(x_of(json!({"type": "integer", "minimum": 0})), 1);
        assert_eq!(x_of(json!({"type": "integer", "maximum": 0})), 0);
        assert_eq!(x_of(json!({"type": "integer", "exclusiveMinimum": 10})), 11);
        assert_eq!(x_of(json!({"type": "integer", "exclusiveMaximum": 1})), 0);
        assert_eq!(x_of(json!({"type": "integer", "multipleOf": 5})), 5);
        assert_eq!(
            x_of(json!({"type": "integer", "minimum": 10, "multipleOf": 7})),
            14
        );
        assert_eq!(
            x_of(json!({"type": "integer", "maximum": -10, "multipleOf": 7})),
            -14
        );
        assert_eq!(
            x_of(json!({"type": "integer", "minimum": 0.5, "maximum": 2.5})),
            1
        );
        x_of(json!({"type": "integer", "exclusiveMinimum": 2.5, "exclusiveMaximum": 4}));
        x_of(json!({"type": "integer", "multipleOf": 0.5, "minimum": 3}));
        x_of(json!({"type": "integer", "multipleOf": 0.1}));
        x_of(json!({"type": "integer", "multipleOf": 0.3, "minimum": 1}));
        x_of(json!({"type": "integer", "minimum": 9_007_199_254_740_993_i64}));
        x_of(json!({"type": "integer", "minimum": u64::MAX}));
        x_of(json!({"type": "integer", "maximum": i64::MIN}));
        x_of(json!({"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255}));
    }

    #[test]
    fn number_bounds() {
        assert_eq!(x_of(json!({"type": "number"})), 1);
        let half = x_of(json!({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}));
        assert_eq!(half, 0.5);
        x_of(json!({"type": "number", "minimum": 0.25, "maximum": 0.75}));
        x_of(json!({"type": "number", "minimum": 0.2, "maximum": 0.2}));
        x_of(json!({"type": "number", "multipleOf": 0.1, "minimum": 0.25, "maximum": 0.35}));
        x_of(
            json!({"type": "number", "multipleOf": 0.1, "exclusiveMinimum": 0.05, "exclusiveMaximum": 0.15}),
        );
        x_of(json!({"type": "number", "multipleOf": 0.01, "minimum": 2.345}));
        x_of(json!({"type": "number", "multipleOf": 2.5, "minimum": 3}));
        x_of(json!({"type": "number", "minimum": 1e300}));
        x_of(json!({"type": "number", "maximum": -1e300}));
        x_of(json!({"type": "number", "exclusiveMinimum": 1.5}));
        x_of(json!({"type": "number", "minimum": -0.5, "maximum": -0.25}));
    }

    #[test]
    fn draft4_boolean_exclusive_bounds() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-04/schema#",
            "type": "object",
            "properties": {
                "x": {"type": "integer", "minimum": 1, "exclusiveMinimum": true},
                "y": {"type": "number", "maximum": 1, "exclusiveMaximum": true},
                "z": {"type": "number", "minimum": 0, "maximum": 1, "exclusiveMinimum": true, "exclusiveMaximum": true}
            },
            "required": ["x", "y", "z"],
            "additionalProperties": false
        });
        let value = valid_for_seeds(&schema);
        assert_eq!(value["x"], 2);
    }
}
