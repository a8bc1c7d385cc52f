import PXTools

await PXListen.main()
