import type { Command } from "commander";

/** Adds an "Examples" block to a command's --help. */
export function examples(command: Command, ...lines: string[]): Command {
  return command.addHelpText("after", `\nExamples:\n${lines.map((line) => `  $ ${line}`).join("\n")}`);
}
