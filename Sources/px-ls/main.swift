import PXTools

await PXLs.main()
