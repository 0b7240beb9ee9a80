import type { Command } from "commander";

/** One command of the tree: its path of names, and what may follow it. */
interface Node {
  path: string;
  subcommands: { name: string; about: string }[];
  options: { flag: string; about: string; takesValue: boolean }[];
  /** Its first argument names an existing database: completed from `shoal db list`. */
  takesDatabase: boolean;
}

/** Commands under `db` whose `<name>` is a new database, not one to complete. */
const NEW_DATABASE = new Set(["db create", "db import"]);

function takesDatabase(cmd: Command, path: string[]): boolean {
  const first = cmd.registeredArguments[0]?.name();
  const joined = path.join(" ");
  return path[0] === "db" && (first === "name" || first === "name|url") && !NEW_DATABASE.has(joined);
}

/** The organization's database names, one a line, as the shell scripts read them. */
const DATABASES_SH = `__shoal_databases() { shoal db list --json 2>/dev/null | sed -n 's/^ *"Name": "\\([^"]*\\)".*/\\1/p'; }`;

/** Every command of the tree, from the program's own options and commands down. */
function nodes(program: Command): Node[] {
  const out: Node[] = [];
  const walk = (cmd: Command, path: string[]) => {
    const options = [...cmd.options, ...(path.length > 0 ? program.options : [])]
      .filter((o) => o.long)
      .map((o) => ({ flag: o.long!, about: o.description, takesValue: o.required || o.optional }));
    options.push({ flag: "--help", about: "show help", takesValue: false });
    out.push({
      path: path.join(" "),
      subcommands: cmd.commands.map((c) => ({ name: c.name(), about: c.description() })),
      options,
      takesDatabase: takesDatabase(cmd, path),
    });
    for (const c of cmd.commands) walk(c, [...path, c.name()]);
  };
  walk(program, []);
  return out;
}

const sh = (text: string) => `'${text.replace(/'/g, "'\\''")}'`;
const firstLine = (text: string) => text.split("\n")[0]!.replace(/\s+/g, " ");

function bash(program: Command): string {
  const all = nodes(program);
  const paths = all.filter((n) => n.path).map((n) => sh(n.path));
  const cases = all
    .map((n) => {
      const words = [...n.subcommands.map((c) => c.name), ...n.options.map((o) => o.flag)].join(" ");
      return `    ${sh(n.path)}) words=${sh(words)} ;;`;
    })
    .join("\n");
  const withDatabases = all.filter((n) => n.takesDatabase).map((n) => sh(n.path));
  return `# bash completion for shoal: source it, or save it as /etc/bash_completion.d/shoal
${DATABASES_SH}
_shoal() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" next w i words
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    [[ "$w" == -* ]] && continue
    next="\${path:+$path }$w"
    case "$next" in
      ${paths.join("|")}) path="$next" ;;
    esac
  done
  case "$path" in
${cases}
  esac
  case "$path" in
    ${withDatabases.join("|")}) [[ "$cur" != -* ]] && words="$words $(__shoal_databases)" ;;
  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _shoal shoal
`;
}

function zsh(program: Command): string {
  const all = nodes(program);
  const esc = (t: string) => t.replace(/\\/g, "\\\\").replace(/:/g, "\\:");
  const paths = all.filter((n) => n.path).map((n) => `"${n.path}"`);
  const cases = all
    .map((n) => {
      const entries = [
        ...n.subcommands.map((c) => sh(`${esc(c.name)}:${esc(firstLine(c.about))}`)),
        ...n.options.map((o) => sh(`${esc(o.flag)}:${esc(firstLine(o.about))}`)),
      ];
      return `    ("${n.path}") entries=(${entries.join(" ")}) ;;`;
    })
    .join("\n");
  const withDatabases = all.filter((n) => n.takesDatabase).map((n) => `"${n.path}"`);
  return `#compdef shoal
# zsh completion for shoal: save it as _shoal in a folder of $fpath, or source it
${DATABASES_SH}
_shoal() {
  local -a entries
  local path_="" next w i
  for ((i = 2; i < CURRENT; i++)); do
    w="\${words[i]}"
    [[ "$w" == -* ]] && continue
    next="\${path_:+$path_ }$w"
    case "$next" in
      (${paths.join("|")}) path_="$next" ;;
    esac
  done
  case "$path_" in
${cases}
  esac
  case "$path_" in
    (${withDatabases.join("|")}) entries+=(\${(f)"$(__shoal_databases)"}) ;;
  esac
  _describe -t commands 'shoal' entries
}
if [[ "\${zsh_eval_context[-1]}" == loadautofunc ]]; then _shoal "$@"; else compdef _shoal shoal; fi
`;
}

function fish(program: Command): string {
  const all = nodes(program);
  const lines = [
    "# fish completion for shoal: save it as ~/.config/fish/completions/shoal.fish",
    `set -g __shoal_paths ${all
      .filter((n) => n.path)
      .map((n) => sh(n.path))
      .join(" ")}`,
    "function __shoal_path",
    "    set -l path",
    "    for w in (commandline -opc)[2..-1]",
    "        string match -q -- '-*' $w; and continue",
    "        set -l next (string join ' ' $path $w)",
    "        contains -- $next $__shoal_paths; and set path $path $w",
    "    end",
    "    string join ' ' $path",
    "end",
    "complete -c shoal -f",
    "function __shoal_databases",
    `    shoal db list --json 2>/dev/null | string match -rg ${sh('"Name": "([^"]*)"')}`,
    "end",
  ];
  for (const n of all) {
    const cond = `test (__shoal_path) = ${sh(n.path)}`;
    for (const c of n.subcommands)
      lines.push(`complete -c shoal -n ${sh(cond)} -a ${sh(c.name)} -d ${sh(firstLine(c.about))}`);
    if (n.takesDatabase) lines.push(`complete -c shoal -n ${sh(cond)} -a '(__shoal_databases)'`);
    for (const o of n.options) {
      lines.push(
        `complete -c shoal -n ${sh(cond)} -l ${o.flag.slice(2)}${o.takesValue ? " -r" : ""} -d ${sh(firstLine(o.about))}`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type CompletionShell = (typeof SHELLS)[number];

/** A completion script for `shell`, generated from the command tree so it never falls behind it. */
export function completionScript(program: Command, shell: CompletionShell): string {
  return shell === "bash" ? bash(program) : shell === "zsh" ? zsh(program) : fish(program);
}
