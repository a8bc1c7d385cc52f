extension StorableFile {
    /// A file whose header has been read already.
    init(path: String, sopClassUID: String, sopInstanceUID: String, transferSyntaxUID: String) {
        self.path = path
        self.sopClassUID = sopClassUID
        self.sopInstanceUID = sopInstanceUID
        self.transferSyntaxUID = transferSyntaxUID
    }
}
