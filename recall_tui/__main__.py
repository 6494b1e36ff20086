from recall_tui.cli import main

raise SystemExit(main())
