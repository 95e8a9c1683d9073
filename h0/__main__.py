from h0.cli import main

raise SystemExit(main())
