"""Being told when a loop ends: `--notify desktop|URL` and `--notify-cmd CMD`, or the
project's `.finesse/config.json` (`settings`); the message (`message`); sending it within
a fixed bound, whatever the other side does (`send`)."""
