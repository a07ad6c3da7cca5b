/**
 * `mediaproof completion bash|zsh`: a completion script built from the program's own
 * command tree, so every command and option (operator and client alike) is covered.
 * zsh uses the same function through bashcompinit.
 */
import type { Command, Option } from 'commander';
import { TASK_TYPES } from '../detectors/catalogue.js';

interface Node {
  path: string;
  subcommands: string[];
  options: string[];
  /** Whether the command takes positional arguments that are files. */
  files: boolean;
  /** Values of options with a fixed set, by flag. */
  choices: Map<string, string[]>;
  fileOptions: string[];
}

const FILE_OPTIONS = new Set(['--reference']);

function walk(command: Command, path: string, nodes: Node[]): void {
  const options = command.options as readonly Option[];
  const choices = new Map<string, string[]>();
  for (const option of options) {
    const values = option.argChoices ?? (option.long === '--task' ? TASK_TYPES.map((t) => t.slug) : undefined);
    if (values) for (const flag of [option.long, option.short]) if (flag) choices.set(flag, [...values]);
  }
  nodes.push({
    path,
    subcommands: command.commands.map((c) => c.name()),
    options: [...options.flatMap((o) => [o.long, o.short].filter((f): f is string => Boolean(f))), '--help'],
    files: command.registeredArguments.some((a) => /file/i.test(a.name())),
    choices,
    fileOptions: options.filter((o) => o.long && FILE_OPTIONS.has(o.long)).flatMap((o) => [o.long!, ...(o.short ? [o.short] : [])]),
  });
  for (const sub of command.commands) walk(sub, path ? `${path} ${sub.name()}` : sub.name(), nodes);
}

export function bashCompletion(program: Command): string {
  const nodes: Node[] = [];
  walk(program, '', nodes);
  const name = program.name();
  const fn = `_${name.replace(/[^a-zA-Z0-9_]/g, '_')}`;
  const cases = (pick: (node: Node) => string | undefined) =>
    nodes.map((node) => {
      const value = pick(node);
      return value === undefined ? '' : `    "${node.path}") ${value};;\n`;
    }).join('');
  const choiceCases = nodes.flatMap((node) => [...node.choices].map(([flag, values]) => `    "${node.path}|${flag}") COMPREPLY=($(compgen -W "${values.join(' ')}" -- "$cur")); return;;\n`)).join('');
  const fileOptionCases = nodes.flatMap((node) => node.fileOptions.map((flag) => `    "${node.path}|${flag}") COMPREPLY=($(compgen -f -- "$cur")); return;;\n`)).join('');
  return `# ${name} completion for bash (and zsh through bashcompinit).
# Load it with:  source <(${name} completion bash)
${fn}_subcommands() {
  case "$1" in
${cases((n) => (n.subcommands.length ? `echo "${n.subcommands.join(' ')}"` : undefined))}  esac
}
${fn}_options() {
  case "$1" in
${cases((n) => `echo "${n.options.join(' ')}"`)}  esac
}
${fn}_takes_files() {
  case "$1" in
${cases((n) => (n.files ? 'return 0' : undefined))}  esac
  return 1
}
${fn}() {
  local cur prev path="" i word
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev="\${COMP_WORDS[COMP_CWORD-1]}"
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case "$word" in -*) continue;; esac
    case " $(${fn}_subcommands "$path") " in *" $word "*) path="\${path:+$path }$word";; esac
  done
  case "$path|$prev" in
${choiceCases}${fileOptionCases}  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$(${fn}_options "$path")" -- "$cur"))
    return
  fi
  local subcommands
  subcommands="$(${fn}_subcommands "$path")"
  if [[ -n "$subcommands" ]]; then
    COMPREPLY=($(compgen -W "$subcommands" -- "$cur"))
  elif ${fn}_takes_files "$path"; then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o filenames -o bashdefault -F ${fn} ${name}
`;
}

export function zshCompletion(program: Command): string {
  return `#compdef ${program.name()}
# ${program.name()} completion for zsh. Load it with:  source <(${program.name()} completion zsh)
autoload -U +X compinit && { (( \${+_comps} )) || compinit; }
autoload -U +X bashcompinit && bashcompinit
${bashCompletion(program).split('\n').slice(2).join('\n')}`;
}

export function registerCompletionCommand(program: Command): void {
  program
    .command('completion')
    .description('print a shell completion script: source <(mediaproof completion bash)')
    .argument('<shell>', 'bash or zsh')
    .action((shell: string) => {
      if (shell === 'bash') process.stdout.write(bashCompletion(program));
      else if (shell === 'zsh') process.stdout.write(zshCompletion(program));
      else {
        console.error(`mediaproof: completion is available for bash and zsh, not "${shell}"`);
        process.exitCode = 64;
      }
    });
}
