from farmhand.cli.main import main

main()
