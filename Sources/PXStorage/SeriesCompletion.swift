/// A completed series (``SeriesBook`` emits one per completed series).
public struct SeriesCompletion: Hashable, Sendable {
    /// The series folder.
    public var directory: String
    public var seriesInstanceUID: String
    public var studyInstanceUID: String
    public var patientID: String
    /// Instances received into the folder since it was (re)opened.
    public var instances: Int
    /// Why it is complete: `"association"` (the associations that brought it ended), `"timeout"`
    /// (idle for the series timeout).
    public var reason: String

    public init(
        directory: String, seriesInstanceUID: String, studyInstanceUID: String, patientID: String, instances: Int,
        reason: String
    ) {
        self.directory = directory
        self.seriesInstanceUID = seriesInstanceUID
        self.studyInstanceUID = studyInstanceUID
        self.patientID = patientID
        self.instances = instances
        self.reason = reason
    }
}
