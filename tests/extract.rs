//! Launch extraction from scripts, command lines, Dockerfiles and engine-config YAML: every
//! expected value here is what a POSIX shell (or Docker, or the YAML file) means by the input.

use kvlint::extract::{extract, parse_command_line, quote_argv, Extracted};
use kvlint::launch::{Arg, Engine, Launch};
use kvlint::source::{Loc, Sources};

fn run(name: &str, text: &str) -> (Sources, Extracted) {
    let mut sources = Sources::default();
    let id = sources.add(name, text);
    let out = extract(id, &sources);
    (sources, out)
}

fn only(out: &Extracted) -> &Launch {
    assert_eq!(out.launches.len(), 1, "{:#?}", out.launches);
    &out.launches[0]
}

fn texts(args: &[Arg]) -> Vec<&str> {
    args.iter().map(|a| a.text.as_str()).collect()
}

/// (line, column, end line, end column), 1-based, end exclusive.
fn pos(s: &Sources, loc: Loc) -> (usize, usize, usize, usize) {
    let p = s.position(loc);
    (p.line, p.column, p.end_line, p.end_column)
}

fn arg<'a>(l: &'a Launch, flag: &str) -> &'a Arg {
    let i = l
        .args
        .iter()
        .position(|a| a.text == flag)
        .unwrap_or_else(|| panic!("no {flag}"));
    &l.args[i + 1]
}

#[test]
fn plain_sglang_launch_with_spans() {
    let (s, out) = run(
        "run.sh",
        "python3 -m sglang.launch_server --model-path zai-org/GLM-5 --tp 8\n",
    );
    let l = only(&out);
    assert_eq!(l.engine, Engine::Sglang);
    assert_eq!(s.text(l.command), "python3 -m sglang.launch_server");
    assert_eq!(
        texts(&l.args),
        ["--model-path", "zai-org/GLM-5", "--tp", "8"]
    );
    assert_eq!(pos(&s, l.args[2].loc), (1, 60, 1, 64));
    assert_eq!(pos(&s, l.args[3].loc), (1, 65, 1, 66));
    assert!(l.env.is_empty());
}

#[test]
fn quotes_and_escapes_are_removed_but_spans_keep_them() {
    let script = r#"python -m sglang.launch_server --served-model-name 'my model' --json-model-override-args "{\"a\": \$1}" --x a\ b"#;
    let (s, out) = run("q.sh", script);
    let l = only(&out);
    assert_eq!(
        texts(&l.args),
        [
            "--served-model-name",
            "my model",
            "--json-model-override-args",
            r#"{"a": $1}"#,
            "--x",
            "a b"
        ]
    );
    assert_eq!(s.text(l.args[1].loc), "'my model'");
    assert_eq!(s.text(l.args[3].loc), r#""{\"a\": \$1}""#);
    assert_eq!(s.text(l.args[5].loc), r"a\ b");
    assert!(l.args.iter().all(|a| a.unresolved.is_empty()));
}

#[test]
fn line_continuations_join_lines_even_inside_a_word() {
    let script = "vllm serve Qwen/Qwen3-8B \\\n  --max-model-len 32768 \\\n  --gpu-memory-util\\\nization 0.9\n";
    let (s, out) = run("c.sh", script);
    let l = only(&out);
    assert_eq!(
        texts(&l.args),
        [
            "Qwen/Qwen3-8B",
            "--max-model-len",
            "32768",
            "--gpu-memory-utilization",
            "0.9"
        ]
    );
    assert_eq!(pos(&s, l.args[2].loc), (2, 19, 2, 24));
    // The split flag spans from its first character on line 3 to its last on line 4.
    assert_eq!(pos(&s, l.args[3].loc), (3, 3, 4, 8));
    assert_eq!(pos(&s, l.args[4].loc), (4, 9, 4, 12));
}

#[test]
fn comments_and_separators_end_commands() {
    let script = "# python -m sglang.launch_server --tp 1\n\
                  cd /srv && python -m sglang.launch_server --tp 2 # the prefill server\n\
                  vllm serve m --max-model-len 4096 2>&1 | tee vllm.log; echo done\n\
                  true || sglang serve --model-path x > out.log &\n";
    let (s, out) = run("sep.sh", script);
    let got: Vec<(Engine, Vec<&str>)> = out
        .launches
        .iter()
        .map(|l| (l.engine, texts(&l.args)))
        .collect();
    assert_eq!(
        got,
        [
            (Engine::Sglang, vec!["--tp", "2"]),
            (Engine::Vllm, vec!["m", "--max-model-len", "4096"]),
            (Engine::Sglang, vec!["--model-path", "x"]),
        ]
    );
    assert_eq!(s.text(out.launches[1].command), "vllm serve");
    assert_eq!(s.text(out.launches[2].command), "sglang serve");
    assert_eq!(pos(&s, out.launches[2].command), (4, 9, 4, 21));
}

#[test]
fn variables_are_substituted_or_reported() {
    let script = "export CTX=131072\nMODEL=zai-org/GLM-5\n\
                  python -m sglang.launch_server --model-path $MODEL --context-length \"${CTX}\" \
                  --tp ${TP:-4} --mem-fraction-static $MEM --port $(get_port) --host `hostname` --x $1\n";
    let (s, out) = run("v.sh", script);
    let l = only(&out);
    let values: Vec<(&str, &str, Vec<&str>)> = l
        .args
        .iter()
        .skip(1)
        .step_by(2)
        .map(|a| {
            (
                a.text.as_str(),
                s.text(a.loc),
                a.unresolved.iter().map(String::as_str).collect(),
            )
        })
        .collect();
    assert_eq!(
        values,
        [
            ("zai-org/GLM-5", "$MODEL", vec![]),
            ("131072", "\"${CTX}\"", vec![]),
            // The caller may set TP: the default is not assumed in a script.
            ("4", "${TP:-4}", vec!["TP (\"4\" unless set by the caller)"]),
            ("$MEM", "$MEM", vec!["MEM"]),
            ("$(get_port)", "$(get_port)", vec!["$(get_port)"]),
            ("`hostname`", "`hostname`", vec!["`hostname`"]),
            ("$1", "$1", vec!["1"]),
        ]
    );
    // Only exported variables reach the engine's environment.
    let env: Vec<(&str, &str)> = l
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.text.as_str()))
        .collect();
    assert_eq!(env, [("CTX", "131072")]);
    assert_eq!(pos(&s, l.env[0].1.loc), (1, 8, 1, 18));
}

#[test]
fn unquoted_expansions_split_into_words_and_quoted_ones_do_not() {
    let script = "EMPTY=\nARGS=\"--tp 8 --context-length 4096\"\n\
                  python -m sglang.launch_server $ARGS \"$ARGS\" ${EMPTY:=} $EMPTY \"\"\n";
    let (s, out) = run("split.sh", script);
    let l = only(&out);
    assert_eq!(
        texts(&l.args),
        [
            "--tp",
            "8",
            "--context-length",
            "4096",
            "--tp 8 --context-length 4096",
            ""
        ]
    );
    assert!(l.args[..4].iter().all(|a| s.text(a.loc) == "$ARGS"));
    assert_eq!(s.text(l.args[5].loc), "\"\"");
}

#[test]
fn prefix_assignments_set_env_but_not_the_same_commands_expansions() {
    let script = "CUDA_VISIBLE_DEVICES=0,1 TP=2 exec nohup python3.11 -u -W ignore -m sglang.launch_server --tp $TP\n";
    let (s, out) = run("p.sh", script);
    let l = only(&out);
    assert_eq!(
        s.text(l.command),
        "python3.11 -u -W ignore -m sglang.launch_server"
    );
    assert_eq!(l.args[1].unresolved, ["TP"]);
    let env: Vec<(&str, &str, &str)> = l
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.text.as_str(), s.text(v.loc)))
        .collect();
    assert_eq!(
        env,
        [
            ("CUDA_VISIBLE_DEVICES", "0,1", "CUDA_VISIBLE_DEVICES=0,1"),
            ("TP", "2", "TP=2")
        ]
    );
}

#[test]
fn env_wrapper_and_python_module_forms() {
    let script = "env -u DEBUG HF_HOME=/data nohup python -m vllm.entrypoints.openai.api_server --model meta/Llama-3-8B\n\
                  /opt/venv/bin/python3 -msglang.launch_server --tp 1\n\
                  /opt/venv/bin/vllm serve m\n";
    let (s, out) = run("w.sh", script);
    assert_eq!(out.launches.len(), 3);
    let vllm = &out.launches[0];
    assert_eq!(vllm.engine, Engine::Vllm);
    assert_eq!(texts(&vllm.args), ["--model", "meta/Llama-3-8B"]);
    assert_eq!(vllm.env[0].0, "HF_HOME");
    assert_eq!(vllm.env[0].1.text, "/data");
    assert_eq!(
        s.text(out.launches[1].command),
        "/opt/venv/bin/python3 -msglang.launch_server"
    );
    assert_eq!(out.launches[2].engine, Engine::Vllm);
}

#[test]
fn mentions_are_not_launches() {
    let script = "echo vllm serve x\npip install vllm\npython train.py -m sglang.launch_server\n\
                  python -c 'import sglang' -m sglang.launch_server\ngrep -r 'python -m sglang.launch_server' .\n";
    let (_, out) = run("m.sh", script);
    assert!(out.launches.is_empty(), "{:#?}", out.launches);
}

#[test]
fn sh_c_strings_are_split_again_with_spans_into_the_file() {
    let script = "export LEN=8192\nsh -c 'vllm serve m --max-model-len $LEN --port $PORT'\n\
                  PORT=1 bash -lc \"python3 -m sglang.launch_server --model-path \\\"a b\\\" --tp $TP\"\n";
    let (s, out) = run("c.sh", script);
    assert_eq!(out.launches.len(), 2);
    let v = &out.launches[0];
    assert_eq!(s.text(v.command), "vllm serve");
    assert_eq!(pos(&s, v.command), (2, 8, 2, 18));
    assert_eq!(arg(v, "--max-model-len").text, "8192");
    assert_eq!(s.text(arg(v, "--max-model-len").loc), "$LEN");
    assert_eq!(arg(v, "--port").unresolved, ["PORT"]);

    let g = &out.launches[1];
    let path = arg(g, "--model-path");
    assert_eq!(path.text, "a b");
    assert_eq!(s.text(path.loc), "\\\"a b\\\"");
    assert_eq!(pos(&s, path.loc).0, 3);
    // $TP is expanded by the outer shell, where it is unknown; PORT is in the inner shell's env.
    assert_eq!(arg(g, "--tp").unresolved, ["TP"]);
    assert!(g.env.iter().any(|(k, v)| k == "PORT" && v.text == "1"));
}

#[test]
fn heredoc_bodies_are_skipped() {
    let script = "cat <<EOF > run.sh\npython -m sglang.launch_server --tp 1\nEOF\n\
                  cat <<-'END' | tee x\n\tvllm serve a\n\tEND\nvllm serve b --x \"$(cat <<X\nhi\nX\n)\"\n";
    let (_, out) = run("h.sh", script);
    let l = only(&out);
    assert_eq!(texts(&l.args)[0], "b");
}

#[test]
fn prefill_and_decode_fixture() {
    let (s, out) = run(
        "fixtures/extract/pd-disagg.sh",
        include_str!("../fixtures/extract/pd-disagg.sh"),
    );
    assert_eq!(out.launches.len(), 2);
    for (l, mode, line) in [
        (&out.launches[0], "prefill", 9),
        (&out.launches[1], "decode", 16),
    ] {
        assert_eq!(l.engine, Engine::Sglang);
        assert_eq!(pos(&s, l.command).0, line);
        assert_eq!(arg(l, "--disaggregation-mode").text, mode);
        assert_eq!(arg(l, "--model-path").text, "zai-org/GLM-5");
        assert_eq!(arg(l, "--context-length").text, "1048576");
        assert_eq!(
            l.env.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["MODEL", "CUDA_VISIBLE_DEVICES"]
        );
        assert_eq!(
            l.args.last().map(|a| a.text.as_str()),
            Some(if mode == "prefill" { "30000" } else { "30001" })
        );
    }
    assert_eq!(arg(&out.launches[0], "--mem-fraction-static").text, "0.88");
    let decode_mem = arg(&out.launches[1], "--mem-fraction-static");
    assert_eq!(
        (decode_mem.text.as_str(), decode_mem.unresolved.as_slice()),
        ("$DECODE_MEM", &["DECODE_MEM".to_string()][..])
    );
    assert_eq!(pos(&s, decode_mem.loc), (20, 32, 20, 43));
}

#[test]
fn dockerfile_entrypoint_and_cmd_make_one_launch() {
    let (s, out) = run(
        "fixtures/extract/vllm.Dockerfile",
        include_str!("../fixtures/extract/vllm.Dockerfile"),
    );
    let l = only(&out);
    assert_eq!(l.engine, Engine::Vllm);
    assert_eq!(
        s.text(l.command),
        r#""python3", "-m", "vllm.entrypoints.openai.api_server""#
    );
    assert_eq!(
        texts(&l.args),
        [
            "--model",
            "Qwen/Qwen3-8B",
            "--max-model-len",
            "32768",
            "--gpu-memory-utilization",
            "0.9"
        ]
    );
    assert_eq!(s.text(l.args[3].loc), "\"32768\"");
    assert_eq!(pos(&s, l.args[3].loc), (7, 25, 7, 32));
    let env: Vec<(&str, &str)> = l
        .env
        .iter()
        .map(|(k, v)| (k.as_str(), v.text.as_str()))
        .collect();
    assert_eq!(env, [("HF_HOME", "/models"), ("MAX_LEN", "32768")]);
}

#[test]
fn dockerfile_exec_form_sh_c_and_shell_form() {
    let text = "FROM x\nENV TP 2\nCMD [\"sh\", \"-c\", \"python3 -m sglang.launch_server --tp $TP --name \\\"a b\\\"\"]\n";
    let (s, out) = run("Dockerfile", text);
    let l = only(&out);
    assert_eq!(texts(&l.args), ["--tp", "2", "--name", "a b"]);
    assert_eq!(s.text(l.args[1].loc), "$TP");
    assert_eq!(s.text(l.args[3].loc), "\\\"a b\\\"");

    let (s, out) = run(
        "Containerfile",
        "FROM x\nCMD vllm serve m \\\n  --max-model-len 8192\n",
    );
    let l = only(&out);
    assert_eq!(texts(&l.args), ["m", "--max-model-len", "8192"]);
    assert_eq!(pos(&s, l.args[2].loc), (3, 19, 3, 23));
}

#[test]
fn command_line_round_trips_through_quote_argv() {
    let argv: Vec<String> = [
        "python3",
        "-m",
        "sglang.launch_server",
        "--model-path",
        "/models/my model",
        "--served-model-name",
        "it's \"quoted\"",
        "--api-key",
        "$HOME`x`$(y)\\n",
        "--empty",
        "",
        "--json",
        "{\"a\": [1, 2]}",
        "#not-a-comment",
        "tab\there\nnewline",
    ]
    .map(String::from)
    .to_vec();
    let line = quote_argv(&argv);
    let mut s = Sources::default();
    let id = s.add("<command line>", line);
    let out = parse_command_line(id, &s);
    let l = only(&out);
    assert_eq!(s.text(l.command), "python3 -m sglang.launch_server");
    let args: Vec<String> = l.args.iter().map(|a| a.text.clone()).collect();
    assert_eq!(args, argv[3..]);
    assert!(l.args.iter().all(|a| a.unresolved.is_empty()));
    assert_eq!(
        quote_argv(&["vllm".into(), "serve".into(), "a=b,c:d".into()]),
        "vllm serve a=b,c:d"
    );
}

#[test]
fn sglang_engine_config_yaml() {
    let (s, out) = run(
        "fixtures/extract/sglang-config.yaml",
        include_str!("../fixtures/extract/sglang-config.yaml"),
    );
    assert!(out.findings.is_empty());
    let l = only(&out);
    assert_eq!(l.engine, Engine::Sglang);
    assert_eq!(
        texts(&l.args),
        [
            "--model-path",
            "zai-org/GLM-5",
            "--tp-size",
            "8",
            "--context-length",
            "131072",
            "--mem-fraction-static",
            "0.85",
            "--enable-metrics",
            "--json-model-override-args",
            r#"{"rope_scaling":{"type":"yarn","factor":4.0}}"#,
        ]
    );
    assert_eq!(s.text(l.args[4].loc), "context-length");
    assert_eq!(pos(&s, l.args[5].loc), (4, 17, 4, 23));
    assert_eq!(pos(&s, l.args[8].loc).0, 6);
}

#[test]
fn vllm_engine_config_yaml() {
    let (s, out) = run(
        "fixtures/extract/vllm-config.yaml",
        include_str!("../fixtures/extract/vllm-config.yaml"),
    );
    let l = only(&out);
    assert_eq!(l.engine, Engine::Vllm);
    assert_eq!(
        texts(&l.args),
        [
            "--model",
            "Qwen/Qwen3-8B",
            "--max_model_len",
            "32768",
            "--gpu-memory-utilization",
            "0.9",
            "--tensor-parallel-size",
            "2",
            "--enforce-eager"
        ]
    );
    assert_eq!(pos(&s, l.args[3].loc), (2, 16, 2, 21));
}

#[test]
fn engine_config_without_yaml_extension_is_recognised() {
    let (_, out) = run("<stdin>", "model-path: x\ntp-size: 2\n");
    assert_eq!(only(&out).engine, Engine::Sglang);
}

#[test]
fn other_yaml_gives_nothing_and_broken_yaml_a_finding() {
    let (_, out) = run(
        "deploy.yaml",
        "apiVersion: v1\nkind: ConfigMap\ndata:\n  model-path: x\n",
    );
    assert!(out.launches.is_empty() && out.findings.is_empty());

    let (s, out) = run("bad.yaml", "model-path: x\ntp-size: [8\n");
    assert!(out.launches.is_empty());
    assert_eq!(out.findings.len(), 1);
    let f = &out.findings[0];
    assert_eq!(f.rule, "INP001");
    assert!(f.get("reason").is_some_and(|r| !r.is_empty()));
    assert!(pos(&s, f.primary.expect("a location")).0 >= 2);
}

#[test]
fn garbage_never_panics() {
    const ALPHABET: &[&str] = &[
        "a",
        "=",
        "$",
        "{",
        "}",
        "(",
        ")",
        "'",
        "\"",
        "\\",
        "\n",
        " ",
        "`",
        "#",
        ";",
        "&",
        "|",
        "<",
        "<<",
        ">",
        ":-",
        "-",
        "[",
        "]",
        ",",
        ":",
        "ç",
        "python3 -m sglang.launch_server ",
        "vllm serve ",
        "sh -c ",
        "EOF",
        "\t",
        "0",
        "\r",
        "FROM x\n",
        "CMD [",
        "ENV ",
        "\\u12",
        "x: ",
        "- ",
    ];
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..3000 {
        let len = (next() % 40) as usize;
        let text: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize])
            .collect();
        let name = ["run.sh", "Dockerfile", "c.yaml", "<stdin>"][round % 4];
        let (s, out) = run(name, &text);
        for l in &out.launches {
            for a in &l.args {
                assert!(
                    a.loc.start <= a.loc.end && a.loc.end <= text.len(),
                    "{text:?}"
                );
                let _ = s.position(a.loc);
            }
        }
        let mut s = Sources::default();
        let id = s.add("<command line>", text.clone());
        let _ = parse_command_line(id, &s);
    }
}

#[test]
fn crlf_scripts_and_trailing_continuations() {
    let script = "vllm serve m\\\r\n  --max-model-len 8192 \\\r\n  --tp 2\\\n\r\n";
    let (s, out) = run("w.sh", script);
    let l = only(&out);
    assert_eq!(
        texts(&l.args),
        ["m", "--max-model-len", "8192", "--tp", "2"]
    );
    assert_eq!(s.text(l.args[0].loc), "m");
    assert_eq!(s.text(l.args[4].loc), "2");
}
