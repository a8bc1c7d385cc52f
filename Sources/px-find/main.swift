import PXTools

await PXFind.main()
