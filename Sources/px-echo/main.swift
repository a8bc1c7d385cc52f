import PXTools

await PXEcho.main()
