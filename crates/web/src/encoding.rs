//! Which content coding of a page file to send, from the request's `Accept-Encoding` (RFC 9110,
//! section 12.5.3): every coding the request names with its weight (`q`, 0 to 1), `*` for any
//! coding it does not name, `identity` (the plain bytes) acceptable unless refused. The files'
//! compressed forms are made once, when the crate is built (`build.rs`); nothing is compressed
//! while serving.

/// A form in which the server can send a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// The file as it is in `crates/web/assets/`; no `Content-Encoding`.
    Identity,
    /// `Content-Encoding: gzip` (also accepted as `x-gzip`).
    Gzip,
    /// `Content-Encoding: br` (Brotli).
    Brotli,
}

impl Encoding {
    /// Every encoding, the server's preference first (the smallest), for ties in weight.
    pub const PREFERENCE: [Encoding; 3] = [Encoding::Brotli, Encoding::Gzip, Encoding::Identity];

    /// The coding's name in `Content-Encoding` (`identity` is never sent there).
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Identity => "identity",
            Encoding::Gzip => "gzip",
            Encoding::Brotli => "br",
        }
    }

    /// Whether `coding` (from `Accept-Encoding`, any case) names this encoding.
    fn is_named(self, coding: &str) -> bool {
        match self {
            Encoding::Identity => coding.eq_ignore_ascii_case("identity"),
            Encoding::Gzip => {
                coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip")
            }
            Encoding::Brotli => coding.eq_ignore_ascii_case("br"),
        }
    }
}

/// A weight in thousandths: `q=0.5` is 500; 0 refuses.
type Weight = u16;

/// The encoding to send to a request whose `Accept-Encoding` is `accept_encoding` (every such
/// header of the request joined with `,`; `None` when it sent none), among those `available`
/// says the file has (`Identity` always is). No header gets the plain bytes: a client that
/// says nothing may not be able to decode anything. The highest weight wins, ties go to the
/// smaller form; when the request refuses everything the file has (`identity;q=0` and no
/// coding it has), the plain bytes all the same, as RFC 9110 advises over an error.
pub fn choose(accept_encoding: Option<&str>, available: impl Fn(Encoding) -> bool) -> Encoding {
    let Some(header) = accept_encoding else {
        return Encoding::Identity;
    };
    let listed: Vec<(&str, Weight)> = header.split(',').filter_map(element).collect();
    let weight = |encoding: Encoding| -> Weight {
        let named = listed
            .iter()
            .filter(|(coding, _)| encoding.is_named(coding))
            .map(|(_, weight)| *weight)
            .max();
        let any = || {
            listed
                .iter()
                .filter(|(coding, _)| *coding == "*")
                .map(|(_, weight)| *weight)
                .max()
        };
        match (named, encoding) {
            (Some(weight), _) => weight,
            (None, Encoding::Identity) => any().unwrap_or(1),
            (None, Encoding::Gzip | Encoding::Brotli) => any().unwrap_or(0),
        }
    };
    let mut best = Encoding::Identity;
    let mut best_weight = 0;
    for encoding in Encoding::PREFERENCE {
        if encoding != Encoding::Identity && !available(encoding) {
            continue;
        }
        let weight = weight(encoding);
        if weight > best_weight {
            best = encoding;
            best_weight = weight;
        }
    }
    best
}

/// One element of `Accept-Encoding`, `coding` or `coding;q=WEIGHT` (other parameters are
/// ignored): the coding and its weight, or `None` for an empty or malformed one (which then
/// counts as not said at all).
fn element(text: &str) -> Option<(&str, Weight)> {
    let mut parts = text.split(';');
    let coding = parts.next()?.trim();
    if coding.is_empty() {
        return None;
    }
    let mut weight = 1000;
    for param in parts {
        let (name, value) = param.split_once('=')?;
        if name.trim().eq_ignore_ascii_case("q") {
            weight = qvalue(value.trim())?;
        }
    }
    Some((coding, weight))
}

/// A `qvalue` (`0`, `0.5`, `1.000`: at most three decimals, never above 1) in thousandths.
fn qvalue(text: &str) -> Option<Weight> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let thousandths: Weight = format!("{fraction:0<3}").parse().ok()?;
    match whole {
        "0" => Some(thousandths),
        "1" if thousandths == 0 => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(_: Encoding) -> bool {
        true
    }

    fn pick(header: Option<&str>) -> Encoding {
        choose(header, all)
    }

    #[test]
    fn no_header_or_identity_gets_the_plain_bytes() {
        assert_eq!(pick(None), Encoding::Identity);
        assert_eq!(pick(Some("")), Encoding::Identity);
        assert_eq!(pick(Some("identity")), Encoding::Identity);
        assert_eq!(pick(Some("deflate, zstd")), Encoding::Identity);
    }

    #[test]
    fn the_smallest_form_wins_a_tie_and_weights_decide_otherwise() {
        // What Chromium sends, to localhost too.
        assert_eq!(pick(Some("gzip, deflate, br, zstd")), Encoding::Brotli);
        assert_eq!(pick(Some("gzip, deflate")), Encoding::Gzip);
        assert_eq!(pick(Some("br;q=0.5, gzip")), Encoding::Gzip);
        assert_eq!(pick(Some("br;q=0.999, gzip;q=1.000")), Encoding::Gzip);
        assert_eq!(pick(Some("identity;q=1, gzip;q=0.5")), Encoding::Identity);
        assert_eq!(pick(Some("GZIP")), Encoding::Gzip);
        assert_eq!(pick(Some("x-gzip")), Encoding::Gzip);
        assert_eq!(pick(Some(" gzip ; q=0.8 ")), Encoding::Gzip);
    }

    #[test]
    fn a_zero_weight_refuses_a_coding() {
        assert_eq!(pick(Some("gzip;q=0")), Encoding::Identity);
        assert_eq!(pick(Some("gzip;q=0.000, br;q=0")), Encoding::Identity);
        assert_eq!(pick(Some("br;q=0, gzip")), Encoding::Gzip);
        assert_eq!(pick(Some("*;q=0, gzip")), Encoding::Gzip);
        // Refusing everything still gets the plain bytes rather than an error.
        assert_eq!(pick(Some("identity;q=0")), Encoding::Identity);
        assert_eq!(pick(Some("*;q=0")), Encoding::Identity);
        assert_eq!(pick(Some("identity;q=0, gzip")), Encoding::Gzip);
    }

    #[test]
    fn the_wildcard_stands_for_what_is_not_named() {
        assert_eq!(pick(Some("*")), Encoding::Brotli);
        assert_eq!(pick(Some("*, br;q=0")), Encoding::Gzip);
        assert_eq!(pick(Some("*;q=0.1, identity")), Encoding::Identity);
    }

    #[test]
    fn a_malformed_element_counts_as_unsaid() {
        for header in [
            "gzip;q=2",
            "gzip;q=1.5",
            "gzip;q=0.1234",
            "gzip;q=abc",
            "gzip;q=",
            "gzip;q=-1",
            "gzip;level",
            ",,;q=1,",
        ] {
            assert_eq!(pick(Some(header)), Encoding::Identity, "{header}");
        }
        assert_eq!(pick(Some("br;q=x, gzip")), Encoding::Gzip);
        // Other parameters are allowed and do not change the weight.
        assert_eq!(pick(Some("gzip;foo=bar;q=0.4, br;q=0.3")), Encoding::Gzip);
    }

    #[test]
    fn only_forms_the_file_has_are_chosen() {
        let gzip_only = |e: Encoding| e != Encoding::Brotli;
        assert_eq!(choose(Some("br, gzip"), gzip_only), Encoding::Gzip);
        assert_eq!(choose(Some("br"), gzip_only), Encoding::Identity);
        let plain_only = |_: Encoding| false;
        assert_eq!(choose(Some("br, gzip"), plain_only), Encoding::Identity);
    }
}
