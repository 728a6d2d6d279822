/** A set that admits at most `max` members; a member admitted stays admitted. */
export class BoundedSet {
  private readonly members = new Set<string>();
  constructor(private readonly max: number) {}
  admit(member: string): boolean {
    if (this.members.has(member)) return true;
    if (this.members.size >= this.max) return false;
    this.members.add(member);
    return true;
  }
}
