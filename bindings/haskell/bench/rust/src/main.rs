//! Times `turnfit_tokenizer_count` called from Rust through the C ABI, on the
//! same inputs and with the same loop as bench/Count.hs: for each input,
//! calls repeated until at least 1 s has passed, best of 3 rounds, ns/call.
use std::time::Instant;

#[repr(C)]
struct Tok {
    _p: [u8; 0],
}
#[repr(C)]
struct Err {
    _p: [u8; 0],
}

#[link(name = "turnfit")]
extern "C" {
    fn turnfit_tokenizer_new(enc: *const u8, len: usize, flags: u32, out: *mut *mut Tok, err: *mut *mut Err) -> u32;
    fn turnfit_tokenizer_count(t: *const Tok, text: *const u8, len: usize, out: *mut usize, err: *mut *mut Err) -> u32;
    fn turnfit_tokenizer_free(t: *mut Tok);
}

fn main() {
    let inputs: Vec<(String, String)> = std::env::args()
        .skip(1)
        .map(|p| {
            let text = if let Some(lit) = p.strip_prefix("literal:") { lit.to_string() } else { std::fs::read_to_string(&p).expect("input") };
            (p, text)
        })
        .collect();
    let enc = "o200k_base";
    let mut t: *mut Tok = std::ptr::null_mut();
    assert_eq!(unsafe { turnfit_tokenizer_new(enc.as_ptr(), enc.len(), 0, &mut t, std::ptr::null_mut()) }, 0);
    for (name, text) in &inputs {
        let count = || {
            let mut n = 0usize;
            let rc = unsafe { turnfit_tokenizer_count(t, text.as_ptr(), text.len(), &mut n, std::ptr::null_mut()) };
            assert_eq!(rc, 0);
            n
        };
        let tokens = count();
        let mut best = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            let mut calls = 0u64;
            while start.elapsed().as_secs_f64() < 1.0 {
                for _ in 0..16 {
                    std::hint::black_box(count());
                }
                calls += 16;
            }
            best = best.min(start.elapsed().as_nanos() as f64 / calls as f64);
        }
        println!("rust\t{}\t{}\t{}\t{:.0}", name, text.len(), tokens, best);
    }
    unsafe { turnfit_tokenizer_free(t) };
}
