//! Each expected output below is what bash's builtins, GNU coreutils 9.1, mawk 1.3 and GNU sed
//! 4.9 wrote for the same arguments and input (C.UTF-8 locale), copied in as written.

use super::*;

/// (argv, standard input, what the real tool writes).
type Case<'a> = (&'a [&'a str], Option<&'a str>, &'a str);

fn argv(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

fn check(cases: &[Case]) {
    for (args, stdin, expected) in cases {
        let got = run(&argv(args), *stdin);
        assert_eq!(got.as_deref(), Some(*expected), "{args:?} on {stdin:?}");
    }
}

#[test]
fn echo_as_bash_writes_it() {
    check(&[
        (&["echo", "0,1,2,3"], None, "0,1,2,3\n"),
        (&["echo", "-n", "0"], None, "0"),
        (&["echo", "-n", "-n", "a", "b"], None, "a b"),
        (&["echo", "-nx", "a"], None, "-nx a\n"),
        (&["echo", "--", "a"], None, "-- a\n"),
        (&["echo"], None, "\n"),
    ]);
}

#[test]
fn printf_reuses_its_format() {
    check(&[
        (&["printf", "%s\\n", "a", "b"], None, "a\nb\n"),
        (&["printf", "%s,", "a", "b"], None, "a,b,"),
        (&["printf", "%s"], None, ""),
        (&["printf", "x%%y\\t"], None, "x%y\t"),
        (&["printf", "%s-%s\\n", "a", "b", "c"], None, "a-b\nc-\n"),
    ]);
}

#[test]
fn tr_translates_deletes_and_squeezes() {
    check(&[
        (&["tr", ",", "\\n"], Some("0,1,2,3\n"), "0\n1\n2\n3\n"),
        (&["tr", "-d", ","], Some("0,1,2\n"), "012\n"),
        (&["tr", "-s", " "], Some("a   b  c\n"), "a b c\n"),
        (&["tr", "-s", ",", "\\n"], Some("a,,b,\n"), "a\nb\n"),
        (&["tr", "-ds", ",", "a"], Some("aa,a,b\n"), "ab\n"),
        (&["tr", "abc", "x"], Some("abcd\n"), "xxxd\n"),
        (&["tr", "aa", "xy"], Some("aa\n"), "yy\n"),
        (&["tr", "a-c", "A-C"], Some("abcd\n"), "ABCd\n"),
        (&["tr", "[:lower:]", "[:upper:]"], Some("gpu0\n"), "GPU0\n"),
        (&["tr", "[:space:]", "X"], Some(" a\tb \n"), "XaXbXX"),
        (&["tr", "-d", "[:digit:]"], Some("a1b22\n"), "ab\n"),
        (&["tr", "\\101-\\132", "x"], Some("A b\n"), "x b\n"),
        (&["tr", "-d", "\\n"], Some("0\n1\n"), "01"),
        (&["tr", "a-", "xy"], Some("a-b\n"), "xyb\n"),
    ]);
}

#[test]
fn wc_prints_a_bare_count() {
    check(&[
        (&["wc", "-l"], Some("0\n1\n"), "2\n"),
        (&["wc", "-l"], Some("0"), "0\n"),
        (&["wc", "-l"], Some(""), "0\n"),
        (&["wc", "-w"], Some(" a b\tc\n\u{b}d "), "4\n"),
        (&["wc", "-c"], Some("0,1\n"), "4\n"),
    ]);
}

#[test]
fn cut_picks_fields() {
    check(&[
        (
            &["cut", "-d,", "-f2"],
            Some("a,b,c\nnodelim"),
            "b\nnodelim\n",
        ),
        (&["cut", "-d", ",", "-f", "1,3"], Some("a,b,c,d\n"), "a,c\n"),
        (&["cut", "-f3,1", "-d,"], Some("a,b,c,d\n"), "a,c\n"),
        (&["cut", "-d,", "-f2-"], Some("a,b,c\n"), "b,c\n"),
        (&["cut", "-d,", "-f-2"], Some("a,b,c\n"), "a,b\n"),
        (&["cut", "-d", " ", "-f2"], Some("a  b c\n"), "\n"),
        (&["cut", "-f2"], Some("x\ty\tz\n"), "y\n"),
    ]);
}

#[test]
fn head_takes_the_first_lines() {
    check(&[
        (&["head", "-n", "2"], Some("1\n2\n3\n"), "1\n2\n"),
        (&["head", "-1"], Some("1\n2\n"), "1\n"),
        (&["head", "-n5"], Some("1\n2\n3"), "1\n2\n3"),
        (
            &["head"],
            Some("0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n"),
            "0\n1\n2\n3\n4\n5\n6\n7\n8\n9\n",
        ),
    ]);
}

#[test]
fn tail_takes_the_last_lines() {
    check(&[
        (&["tail", "-n", "2"], Some("1\n2\n3"), "2\n3"),
        (&["tail", "-1"], Some("1\n2\n"), "2\n"),
        (&["tail", "-n", "+2"], Some("1\n2\n3\n"), "2\n3\n"),
        (&["tail", "-n", "1"], Some("a\n\n"), "\n"),
        (&["tail", "-n", "0"], Some("a\n"), ""),
    ]);
}

#[test]
fn awk_prints_nf_or_a_field() {
    check(&[
        (
            &["awk", "-F,", "{print NF}"],
            Some("0,1,2,3\n\nx"),
            "4\n0\n1\n",
        ),
        (
            &["awk", "-F", ",", "{ print $2 }"],
            Some("a,b,c\nd\n"),
            "b\n\n",
        ),
        (&["awk", "{print $1}"], Some("  x  y \n"), "x\n"),
        (&["awk", "{print NF}"], Some(" a  b \n"), "2\n"),
        (&["awk", "-F:", "{print $NF}"], Some("a:b:c\n\n"), "c\n\n"),
        (&["awk", "-F\\t", "{print $2}"], Some("a\tb\n"), "b\n"),
        (&["awk", "-F|", "{print $2;}"], Some("a|b\n"), "b\n"),
    ]);
}

#[test]
fn sort_orders_as_every_locale_does() {
    check(&[
        (&["sort"], Some("b\na\n10\n9"), "10\n9\na\nb\n"),
        (&["sort", "-n"], Some("3\n-1\n20\n"), "-1\n3\n20\n"),
        (&["sort", "-rn"], Some("3\n-1\n20\n"), "20\n3\n-1\n"),
        (&["sort", "-u"], Some("b\na\nb\n"), "a\nb\n"),
    ]);
}

#[test]
fn uniq_drops_adjacent_repeats() {
    check(&[(&["uniq"], Some("a\na\nb\na"), "a\nb\na\n")]);
}

#[test]
fn xargs_joins_words() {
    check(&[
        (&["xargs"], Some("0\n1  2\n"), "0 1 2\n"),
        (&["xargs"], Some(""), "\n"),
    ]);
}

#[test]
fn sed_replaces_plain_text() {
    check(&[
        (&["sed", "s/,/ /g"], Some("0,1,2\n"), "0 1 2\n"),
        (&["sed", "s|a|xy|"], Some("aa\naa"), "xya\nxya"),
        (&["sed", "-e", "s/x/y/"], Some("x\n"), "y\n"),
    ]);
}

#[test]
fn forms_not_listed_stay_unknown() {
    let unknown: &[(&[&str], Option<&str>)] = &[
        // Other commands, and the GPU-reading idioms.
        (&["nvidia-smi", "-L"], None),
        (&["python", "-c", "print(1)"], None),
        (&["cat"], Some("a\n")),
        // A filter reading the script's own standard input.
        (&["wc", "-l"], None),
        // Escapes, which bash's and dash's `echo` read differently; printf directives not listed.
        (&["echo", "-e", "a"], None),
        (&["echo", "a\\nb"], None),
        (&["printf", "%d", "1"], None),
        (&["printf", "-v", "x", "%s", "1"], None),
        (&["printf", "x", "extra"], None),
        // tr: complements, repeats, equivalence classes, errors, bytes past ASCII.
        (&["tr", "-c", "a", "b"], Some("ab\n")),
        (&["tr", "[a*2]", "x"], Some("ab\n")),
        (&["tr", "[=a=]", "x"], Some("ab\n")),
        (&["tr", "a", ""], Some("ab\n")),
        (&["tr", "z-a", "x"], Some("ab\n")),
        (&["tr", "\\q", "x"], Some("ab\n")),
        (&["tr", "a-z", "[:upper:]"], Some("ab\n")),
        (&["tr", "a", "b"], Some("é\n")),
        (&["tr", "-d", "a", "b"], Some("ab\n")),
        // wc: several counts (padded), files, characters.
        (&["wc"], Some("a\n")),
        (&["wc", "-l", "-w"], Some("a\n")),
        (&["wc", "-l", "f"], Some("a\n")),
        (&["wc", "-m"], Some("a\n")),
        (&["wc", "-w"], Some("\u{1}a\n")),
        // cut: characters, -s, a multi-character delimiter, field 0, a decreasing range.
        (&["cut", "-c1"], Some("ab\n")),
        (&["cut", "-s", "-d,", "-f1"], Some("a,b\n")),
        (&["cut", "-d,,", "-f1"], Some("a,b\n")),
        (&["cut", "-d,", "-f0"], Some("a,b\n")),
        (&["cut", "-d,", "-f3-1"], Some("a,b\n")),
        (&["cut", "-d,"], Some("a,b\n")),
        // head/tail: all but the last lines, bytes, obsolete `+N`.
        (&["head", "-n", "-1"], Some("a\nb\n")),
        (&["head", "-c", "1"], Some("a\nb\n")),
        (&["tail", "+2"], Some("a\nb\n")),
        // awk: any other program, `-F` as a regular expression or gawk's `t`.
        (&["awk", "{print $1+1}"], Some("1\n")),
        (&["awk", "END{print NR}"], Some("1\n")),
        (&["awk", "-F", ", ", "{print $1}"], Some("a, b\n")),
        (&["awk", "-Ft", "{print $1}"], Some("atb\n")),
        (&["awk", "-v", "x=1", "{print $1}"], Some("a\n")),
        // sort/uniq: orders the locale decides, keys, counts.
        (&["sort"], Some("b\nA\n")),
        (&["sort"], Some("a b\nab\n")),
        (&["sort", "-n"], Some("010\n9\n")),
        (&["sort", "-k2"], Some("a\n")),
        (&["uniq", "-c"], Some("a\na\n")),
        // xargs: arguments, quotes it reads, a first word echo takes for an option.
        (&["xargs", "-n1"], Some("a b\n")),
        (&["xargs"], Some("'a b'\n")),
        (&["xargs"], Some("-n a\n")),
        // sed: regular expressions, `&`, other commands and options.
        (&["sed", "s/a.*/b/"], Some("ab\n")),
        (&["sed", "s/a/&&/"], Some("ab\n")),
        (&["sed", "s/a/b/2"], Some("aa\n")),
        (&["sed", "-n", "s/a/b/p"], Some("a\n")),
        (&["sed", "s/a/b/;s/b/c/"], Some("a\n")),
        (&["sed", "-E", "s/a/b/"], Some("a\n")),
    ];
    for (args, stdin) in unknown {
        assert_eq!(run(&argv(args), *stdin), None, "{args:?} on {stdin:?}");
    }
}

#[test]
fn text_past_the_cap_is_not_worked_out() {
    let long = "a".repeat(MAX_TEXT + 1);
    assert_eq!(run(&argv(&["tr", "a", "b"]), Some(&long)), None);
    let line = "a".repeat(1000);
    let wide = "b".repeat(100);
    assert_eq!(
        run(&argv(&["sed", &format!("s/a/{wide}/g")]), Some(&line)),
        None
    );
    let list = vec!["1"; 65].join(",");
    assert_eq!(
        run(&argv(&["cut", "-d,", "-f", &list]), Some("a,b\n")),
        None
    );
    let many: Vec<&str> = std::iter::repeat_n("abcdefgh", MAX_TEXT / 8 + 1).collect();
    let printf = [&["printf", "%s"][..], &many].concat();
    assert_eq!(run(&argv(&printf), None), None);
}
