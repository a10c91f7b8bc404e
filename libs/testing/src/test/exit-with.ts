// A tiny entry point for the process-helper test: prints a line and exits with EXIT_CODE.
process.stdout.write('hello from a child\n');
process.exit(Number(process.env.EXIT_CODE ?? 0));
