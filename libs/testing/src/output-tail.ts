/** Keeps only the end of a child's output: enough to explain a failed start, bounded in memory. */
export class OutputTail {
  private chunks: string[] = [];
  private size = 0;

  constructor(private readonly maxChars = 8_192) {}

  push(chunk: Buffer | string): void {
    const text = chunk.toString();
    this.chunks.push(text);
    this.size += text.length;
    while (this.size > this.maxChars && this.chunks.length > 1) {
      this.size -= this.chunks.shift()?.length ?? 0;
    }
  }

  text(): string {
    const all = this.chunks.join("");
    return all.length > this.maxChars ? all.slice(-this.maxChars) : all;
  }
}
