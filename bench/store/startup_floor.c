/* startup-floor-c: does nothing; linked only against libc (docs/startup.md). */
int main(void) { return 0; }
