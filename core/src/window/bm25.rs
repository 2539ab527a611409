//! A small Okapi BM25 scorer over lowercase alphanumeric words, used to rank
//! older turns against the latest user input. It is written out here (forty
//! lines) rather than taken from a crate because turnfit needs only scoring of
//! a handful of documents against one query, with deterministic results.

use std::collections::HashMap;

const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Lowercase runs of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).map(str::to_lowercase).collect()
}

/// BM25 score of each document against `query`.
pub fn scores(query: &str, docs: &[String]) -> Vec<f64> {
    let q: Vec<String> = {
        let mut q = words(query);
        q.sort();
        q.dedup();
        q
    };
    let tokenized: Vec<Vec<String>> = docs.iter().map(|d| words(d)).collect();
    let n = tokenized.len() as f64;
    let avg = (tokenized.iter().map(Vec::len).sum::<usize>() as f64 / n.max(1.0)).max(1.0);
    let mut df: HashMap<&str, usize> = HashMap::new();
    for doc in &tokenized {
        let mut seen: Vec<&str> = doc.iter().map(String::as_str).collect();
        seen.sort_unstable();
        seen.dedup();
        for w in seen {
            *df.entry(w).or_default() += 1;
        }
    }
    tokenized
        .iter()
        .map(|doc| {
            let mut tf: HashMap<&str, usize> = HashMap::new();
            for w in doc {
                *tf.entry(w.as_str()).or_default() += 1;
            }
            let len = doc.len() as f64;
            q.iter()
                .map(|t| {
                    let f = *tf.get(t.as_str()).unwrap_or(&0) as f64;
                    if f == 0.0 {
                        return 0.0;
                    }
                    let d = *df.get(t.as_str()).unwrap_or(&0) as f64;
                    let idf = ((n - d + 0.5) / (d + 0.5) + 1.0).ln();
                    idf * f * (K1 + 1.0) / (f + K1 * (1.0 - B + B * len / avg))
                })
                .sum()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relevant_documents_score_higher() {
        let docs = vec![
            "the parser fails on nested braces".to_owned(),
            "weather is nice today".to_owned(),
            "braces braces everywhere in the parser".to_owned(),
        ];
        let s = scores("why does the parser choke on braces", &docs);
        assert!(s[0] > s[1] && s[2] > s[1], "{s:?}");
        assert_eq!(s[1], 0.0);
        assert_eq!(words("Hello, World-42!"), ["hello", "world", "42"]);
    }
}
